import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardAssetDir } from '../../src/dashboard/assets.js';
import { DASHBOARD_CSP } from '../../src/server/routes/dashboard.js';
import { startServer, type TestServer } from './helpers.js';

let svc: TestServer;
beforeAll(async () => {
  svc = await startServer();
});
afterAll(async () => {
  await svc?.close();
});

/** Every local URL the page names in `src` / `href` attributes. */
function referencedAssets(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="(dashboard\/assets\/[^"]+)"/g)].map((m) => m[1]!);
}

describe('GET /dashboard', () => {
  it('serves the page under a strict Content-Security-Policy', async () => {
    const res = await fetch(`${svc.url}/dashboard`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy');
    expect(csp).toBe(DASHBOARD_CSP);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain('unsafe');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    expect(html).toContain('<title>svc dashboard</title>');
    // No inline script or style, no style attributes, nothing from another origin.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
  });

  it('serves every asset the page references, with its type and the same policy', async () => {
    const html = await (await fetch(`${svc.url}/dashboard`)).text();
    const assets = referencedAssets(html);
    expect(assets).toEqual(
      expect.arrayContaining([
        'dashboard/assets/main.js',
        'dashboard/assets/vendor/uplot.css',
        'dashboard/assets/dashboard.css',
      ]),
    );
    for (const path of assets) {
      const res = await fetch(`${svc.url}/${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-security-policy'), path).toBe(DASHBOARD_CSP);
      const type = res.headers.get('content-type') ?? '';
      if (path.endsWith('.js')) expect(type, path).toBe('text/javascript; charset=utf-8');
      if (path.endsWith('.css')) expect(type, path).toBe('text/css; charset=utf-8');
      if (path.endsWith('.svg')) expect(type, path).toBe('image/svg+xml');
    }
  });

  it('serves uPlot from its npm package, byte for byte', async () => {
    const served = await (await fetch(`${svc.url}/dashboard/assets/vendor/uplot.js`)).text();
    const published = await readFile(join('node_modules', 'uplot', 'dist', 'uPlot.esm.js'), 'utf8');
    expect(served).toBe(published);
  });

  it('imports nothing from outside svc in its own scripts and styles', async () => {
    const dir = dashboardAssetDir();
    for (const name of await readdir(dir)) {
      if (!/\.(js|css|html)$/.test(name)) continue;
      const text = await readFile(join(dir, name), 'utf8');
      expect(text, name).not.toMatch(/https?:\/\/|@import|url\(/);
    }
  });

  it('answers 404 for unknown assets and paths outside the asset folder', async () => {
    for (const path of [
      'dashboard/assets/nope.js',
      'dashboard/assets/tsconfig.json',
      'dashboard/assets/vendor/uplot.d.ts',
      'dashboard/assets/index.html',
      'dashboard/assets/%2e%2e/assets.ts',
    ]) {
      const res = await fetch(`${svc.url}/${path}`);
      expect(res.status, path).toBe(404);
      expect((await res.json()).error.type, path).toBe('not_found');
    }
    // an encoded slash is refused before routing (issue 15: one canonical path)
    const encoded = await fetch(`${svc.url}/dashboard/assets/..%2f..%2fpackage.json`);
    expect(encoded.status).toBe(400);
    expect(encoded.headers.get('x-svc-error')).toBe('SVC_BAD_REQUEST');
  });

  it('revalidates with an ETag, answers HEAD, and redirects the trailing slash', async () => {
    const first = await fetch(`${svc.url}/dashboard/assets/main.js`);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(first.headers.get('cache-control')).toBe('no-cache');
    const again = await fetch(`${svc.url}/dashboard/assets/main.js`, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');

    const head = await fetch(`${svc.url}/dashboard`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(1000);

    const slash = await fetch(`${svc.url}/dashboard/?poll=1000`, { redirect: 'manual' });
    expect(slash.status).toBe(308);
    const target = new URL(slash.headers.get('location')!, `${svc.url}/dashboard/`);
    expect(target.pathname + target.search).toBe('/dashboard?poll=1000');
  });
});
