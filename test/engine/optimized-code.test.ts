import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// V8 keeps a closure's optimized code only while a closure of it is alive: a
// walk made per call (`const walk = (v) => ...` inside the function that uses
// it, a callback passed to `forEach`) loses its compiled form at every full
// collection and is compiled again on the next request. Under a load of new
// conversations that cost `svc serve` ~8 ms of compiler time a request
// (docs/perf.md, twenty-fifth pass). The engine's walks and callbacks are
// module functions, which keep theirs.

const CHILD = fileURLToPath(new URL('./fixtures/reopt-child.mjs', import.meta.url));
const ROUNDS = 24;
const run = promisify(execFile);

/** Optimized compilations per function (by its shared function info) of a run of the child. */
async function compilations(): Promise<Map<string, number>> {
  const { stdout } = await run(process.execPath, ['--trace-opt', '--expose-gc', CHILD, String(ROUNDS)], {
    maxBuffer: 64 * 1024 * 1024,
  });
  const counts = new Map<string, number>();
  for (const m of stdout.matchAll(
    /completed compiling 0x[0-9a-f]+ <JSFunction ?([^ ]*) \(sfi = (0x[0-9a-f]+)\)>/g,
  )) {
    const key = `${m[1] || '(anonymous)'} ${m[2]}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

describe('optimized code of the engine', () => {
  it('is not compiled again after every full collection', async () => {
    const counts = await compilations();
    // the trace was read, and the engine was compiled
    expect([...counts.keys()].some((k) => k.startsWith('nextIdentifier '))).toBe(true);
    // a function deoptimized once by a new kind of input is compiled again; one that loses its
    // code at each collection is compiled about once a round (the closures: 70-77 in all)
    const again = [...counts].filter(([, n]) => n > 1);
    const repeats = again.reduce((sum, [, n]) => sum + n - 1, 0);
    expect(repeats, again.map(([k, n]) => `${k} x${n}`).join(', ')).toBeLessThanOrEqual(8);
  }, 60_000);
});
