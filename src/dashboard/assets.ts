import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SvcError } from '../errors.js';
import { PACKAGE_ROOT } from '../version.js';

/** One file the dashboard serves, held in memory. */
export interface DashboardAsset {
  body: Buffer;
  contentType: string;
  /** Strong validator: a hash of the body. */
  etag: string;
}

/** Content types of the extensions the dashboard serves; other files are never served. */
const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * Files taken from npm packages, served under `vendor/`. uPlot is a runtime
 * dependency, so its published build is served straight from node_modules.
 */
const VENDOR_FILES: Record<string, string> = {
  'vendor/uplot.js': 'uplot/dist/uPlot.esm.js',
  'vendor/uplot.css': 'uplot/dist/uPlot.min.css',
};

/**
 * Where the page's own files live. From source (`src/dashboard/`) they sit
 * beside this module; from the build (`dist/src/dashboard/`, or bundled into
 * `dist/src/cli-bundle/`) tsc does not copy them, so they are read from the
 * package's `src/dashboard/assets/`.
 */
export function dashboardAssetDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, 'assets'), join(PACKAGE_ROOT, 'src', 'dashboard', 'assets')];
  const found = candidates.find((dir) => existsSync(join(dir, 'index.html')));
  if (!found) {
    throw new SvcError('SVC_INTERNAL', `dashboard assets not found (looked in ${candidates.join(', ')})`);
  }
  return found;
}

function asset(body: Buffer, file: string): DashboardAsset {
  const contentType = CONTENT_TYPES[extname(file)] ?? 'application/octet-stream';
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { body, contentType, etag };
}

/**
 * Reads every servable file into memory, keyed by its path under
 * `/dashboard/assets/` (`main.js`, `vendor/uplot.js`); `index.html` is the page.
 * Only names in this map are ever served, so no request path reaches the disk.
 */
export async function loadDashboardAssets(dir = dashboardAssetDir()): Promise<Map<string, DashboardAsset>> {
  const assets = new Map<string, DashboardAsset>();
  for (const name of await readdir(dir)) {
    if (!(extname(name) in CONTENT_TYPES)) continue;
    assets.set(name, asset(await readFile(join(dir, name)), name));
  }
  const require = createRequire(import.meta.url);
  for (const [name, specifier] of Object.entries(VENDOR_FILES)) {
    assets.set(name, asset(await readFile(require.resolve(specifier)), specifier));
  }
  return assets;
}
