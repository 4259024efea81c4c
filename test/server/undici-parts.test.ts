import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { type MockUpstream, replyJson, startMockUpstream } from './helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await upstream?.close();
  upstream = undefined;
});

/**
 * In a process of its own (the test runner has loaded undici whole): the
 * built module's parts call the mock upstream, and undici's index, which
 * loads all of undici, is never loaded.
 */
const SCRIPT = `
import { createRequire } from 'node:module';
const { undiciParts } = await import('./dist/src/server/proxy/undici-parts.js');
const parts = await undiciParts();
const agent = new parts.Agent({ factory: (origin, options) => new parts.Pool(origin, options) });
const res = await parts.request(agent, { origin: process.argv[1], path: '/v1/ping', method: 'POST', body: '{}' });
const text = await res.body.text();
await agent.close();
const loaded = Object.keys(createRequire(import.meta.url).cache).filter((f) => /node_modules\\/undici\\//.test(f));
console.log(JSON.stringify({
  status: res.statusCode,
  text,
  index: loaded.some((f) => f.endsWith('/undici/index.js')),
  fetch: loaded.some((f) => f.includes('/lib/web/')),
  aborted: typeof parts.errors.RequestAbortedError,
}));
`;

describe('undici loaded by parts (issue 19)', () => {
  it('calls the upstream without loading undici whole', async () => {
    const seen: string[] = [];
    upstream = await startMockUpstream((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      replyJson(res, 200, { ok: true });
    });
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--input-type=module', '-e', SCRIPT, upstream.url],
      { cwd: ROOT },
    );
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(seen).toEqual(['POST /v1/ping']);
    expect(out).toEqual({
      status: 200,
      text: '{"ok":true}',
      index: false,
      fetch: false,
      aborted: 'function',
    });
  });
});
