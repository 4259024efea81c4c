/**
 * Importing the client entries (through the package's own `exports`, as a
 * user would) loads none of the server's dependencies. A child process
 * records every module the ESM loader loads (a `load` hook) and every
 * CommonJS module in the require cache.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SERVER_DEPS = [
  '@oclif',
  'ink',
  'react',
  'polka',
  'undici',
  'onnxruntime-node',
  'onnxruntime-common',
  'tiktoken',
  'gpt-tokenizer',
  'lowdb',
  'prom-client',
  'lru-cache',
  'cli-table3',
  'csv-stringify',
  'proper-lockfile',
];

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

let work: string;

beforeAll(() => {
  // `npm test` builds first (pretest); when this file runs alone, build a stale dist.
  const built = join(ROOT, 'packages/client/dist/index.js');
  let fresh = false;
  try {
    fresh = statSync(built).mtimeMs >= newestMtime(join(ROOT, 'packages/client/src'));
  } catch {
    fresh = false;
  }
  if (!fresh)
    execFileSync('npx', ['tsc', '-p', 'packages/client/tsconfig.json'], { cwd: ROOT, stdio: 'ignore' });
  work = mkdtempSync(join(tmpdir(), 'svc-client-deps-'));
  writeFileSync(
    join(work, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(process.env.SVC_LOAD_LOG, url + '\\n');
  return next(url, context);
}
`,
  );
  writeFileSync(
    join(work, 'register.mjs'),
    `import { register } from 'node:module';
register(${JSON.stringify(pathToFileURL(join(work, 'hooks.mjs')).href)});
`,
  );
}, 180_000);

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

/** Imports `specifier` from inside the package; returns every loaded module URL or path. */
function loadedBy(specifier: string): { loaded: string[]; exports: string[] } {
  const log = join(work, `${specifier.replaceAll('/', '_')}.log`);
  writeFileSync(log, '');
  const script = `
    import { createRequire } from 'node:module';
    const mod = await import(${JSON.stringify(specifier)});
    const require = createRequire(import.meta.url);
    const { appendFileSync } = await import('node:fs');
    appendFileSync(process.env.SVC_LOAD_LOG, Object.keys(require.cache).join('\\n') + '\\n');
    console.log(JSON.stringify(Object.keys(mod).sort()));
  `;
  const out = execFileSync(
    process.execPath,
    ['--import', pathToFileURL(join(work, 'register.mjs')).href, '--input-type=module', '-e', script],
    { cwd: ROOT, env: { ...process.env, SVC_LOAD_LOG: log }, encoding: 'utf8' },
  );
  const loaded = execFileSync('cat', [log], { encoding: 'utf8' }).split('\n').filter(Boolean);
  return { loaded, exports: JSON.parse(out.trim().split('\n').pop()!) as string[] };
}

function serverDepsIn(loaded: string[]): string[] {
  return loaded.filter(
    (url) => SERVER_DEPS.some((dep) => url.includes(`/node_modules/${dep}/`)) || /\/dist\/src\//.test(url),
  );
}

describe('client entries load none of the server dependencies', () => {
  it('svc-proxy-client: only its own files, no package and no node: built-in at all', () => {
    const { loaded, exports } = loadedBy('svc-proxy-client');
    expect(exports).toEqual(
      expect.arrayContaining([
        'CompressionClient',
        'compress',
        'SvcClientError',
        'SvcAuthError',
        'SvcCompressError',
      ]),
    );
    const files = loaded.filter((u) => u.startsWith('file:'));
    expect(files.some((u) => u.endsWith('/packages/client/dist/index.js'))).toBe(true);
    expect(files.every((u) => u.includes('/packages/client/dist/'))).toBe(true);
    expect(loaded.filter((u) => u.startsWith('node:') && u !== 'node:module' && u !== 'node:fs')).toEqual([]);
    expect(serverDepsIn(loaded)).toEqual([]);
  });

  for (const entry of ['svc-proxy-client/openai', 'svc-proxy-client/anthropic']) {
    it(`${entry}: no SDK and no server dependency is loaded`, () => {
      const { loaded, exports } = loadedBy(entry);
      expect(exports).toContain('withCompression');
      expect(loaded.filter((u) => u.includes('/node_modules/'))).toEqual([]);
      expect(serverDepsIn(loaded)).toEqual([]);
    });
  }

  it('svc-proxy-client/ai-sdk: loads `ai` (the user brings it) but no server dependency', () => {
    // (`ai` brings its own small dependencies, eventsource-parser among them; those are not the server's.)
    const { loaded, exports } = loadedBy('svc-proxy-client/ai-sdk');
    expect(exports).toEqual(['compressionMiddleware', 'withCompression']);
    expect(loaded.some((u) => u.includes('/node_modules/ai/'))).toBe(true);
    expect(serverDepsIn(loaded)).toEqual([]);
  });

  it('the check itself sees a server dependency when one is loaded', () => {
    const { loaded } = loadedBy('polka');
    expect(serverDepsIn(loaded).length).toBeGreaterThan(0);
  });
});
