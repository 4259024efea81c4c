import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * In a process of its own (the test runner may have loaded jsonc-parser):
 * valid input is parsed without loading jsonc-parser, which only locates the
 * error in input that is not JSON (issue 19: `svc compress` wall time).
 */
const SCRIPT = `
import { createRequire } from 'node:module';
const { parseJsonInput } = await import('./dist/src/cli/parse-json.js');
const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((f) => f.includes('/jsonc-parser/'));
const value = parseJsonInput('{"messages": []}', 'a.json');
const afterValid = loaded();
let message = '';
try {
  parseJsonInput('{"messages": [1,\\n]}', 'b.json');
} catch (err) {
  message = err.message;
}
console.log(JSON.stringify({ value, afterValid, afterInvalid: loaded(), message }));
`;

describe('parseJsonInput loads jsonc-parser only for input that is not JSON', () => {
  it('parses valid input without it, and locates an error with it', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', SCRIPT], {
      cwd: ROOT,
    });
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(out.value).toEqual({ messages: [] });
    expect(out.afterValid).toBe(false);
    expect(out.afterInvalid).toBe(true);
    expect(out.message).toBe('b.json: not valid JSON at line 2, column 1: expected a value');
  });
});
