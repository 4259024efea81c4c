import type { IncomingMessage, ServerResponse } from 'node:http';
import { type DashboardAsset, loadDashboardAssets } from '../../dashboard/assets.js';
import { DEFAULT_FORMAT } from '../../formats/index.js';
import type { RoutePlugin } from '../context.js';
import { sendError } from '../respond.js';

/**
 * The page's Content-Security-Policy: everything comes from svc itself, no
 * inline script or style, no eval, no frames, no form posts.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const ASSET_PREFIX = '/dashboard/assets/';

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': DASHBOARD_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

function sendAsset(req: IncomingMessage, res: ServerResponse, file: DashboardAsset): void {
  // `no-cache` revalidates on every load, so an upgraded svc never serves a stale page.
  const headers = { ...SECURITY_HEADERS, etag: file.etag, 'cache-control': 'no-cache' };
  if (req.headers['if-none-match'] === file.etag) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  res.writeHead(200, {
    ...headers,
    'content-type': file.contentType,
    'content-length': String(file.body.length),
  });
  res.end(req.method === 'HEAD' ? undefined : file.body);
}

/**
 * `GET /dashboard` (the page) and `GET /dashboard/assets/*` (its scripts,
 * styles and the uPlot build), read into memory on the first request for
 * one (not at start-up: most servers never serve the page, issue 19). If the
 * files cannot be read the dashboard answers 503, and the error is logged once.
 */
export const dashboardRoutes: RoutePlugin = (app, ctx) => {
  let loading: Promise<Map<string, DashboardAsset> | undefined> | undefined;
  const load = () =>
    (loading ??= loadDashboardAssets().catch((err: unknown) => {
      ctx.logger.error('dashboard disabled: its files could not be read', { error: String(err) });
      return undefined;
    }));
  const unavailable = (res: ServerResponse) =>
    sendError(
      res,
      DEFAULT_FORMAT,
      503,
      'dashboard_unavailable',
      'dashboard files are missing from this install',
    );
  for (const method of ['get', 'head'] as const) {
    app[method]('/dashboard', async (req, res) => {
      if (req.path.endsWith('/')) {
        // The page's URLs are relative to `/dashboard` (so a proxy may add a path
        // prefix); polka also matches `/dashboard/`, which would break them.
        const query = (req.url ?? '').replace(/^[^?]*/, '');
        res.writeHead(308, { location: `../dashboard${query}`, 'content-length': '0' });
        res.end();
        return;
      }
      const assets = await load();
      if (!assets) return unavailable(res);
      sendAsset(req, res, assets.get('index.html')!);
    });
    app[method](`${ASSET_PREFIX}*`, async (req, res) => {
      const assets = await load();
      if (!assets) return unavailable(res);
      // polka's `*` param holds one segment only; take the rest of the path (`vendor/uplot.js`).
      const name = req.path.slice(ASSET_PREFIX.length);
      const file = name === 'index.html' ? undefined : assets.get(name);
      if (!file) return sendError(res, DEFAULT_FORMAT, 404, 'not_found', `no dashboard asset ${name}`);
      sendAsset(req, res, file);
    });
  }
};
