import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * In a process of its own (the test runner may have loaded prom-client
 * whole): the built module's parts make a registry and its text, and
 * prom-client's index (its default process metrics, @opentelemetry/api) is
 * never loaded.
 */
const SCRIPT = `
import { createRequire } from 'node:module';
const { Counter, Histogram, Registry } = await import('./dist/src/stats/prom.js');
const registry = new Registry();
new Counter({ name: 'x_total', help: 'x', registers: [registry] }).inc(2);
new Histogram({ name: 'y', help: 'y', buckets: [1], registers: [registry] }).observe(0.5);
const text = await registry.metrics();
const loaded = Object.keys(createRequire(import.meta.url).cache);
console.log(JSON.stringify({
  text,
  index: loaded.some((f) => f.endsWith('/prom-client/index.js')),
  otel: loaded.some((f) => f.includes('/@opentelemetry/')),
}));
`;

describe('prom-client loaded by parts (issue 19)', () => {
  it('builds a registry without loading prom-client whole', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', SCRIPT], {
      cwd: ROOT,
    });
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(out.index).toBe(false);
    expect(out.otel).toBe(false);
    expect(out.text).toContain('x_total 2');
    expect(out.text).toContain('y_bucket{le="1"} 1');
    expect(out.text).toContain('y_count 1');
  });
});
