import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, ROOT } from './helpers.js';

/** A module hook that names every file module the process loads on stderr. */
const HOOKS = `export async function load(url, context, next) {
  if (url.startsWith('file:')) process.stderr.write('LOADED ' + url + '\\n');
  return next(url, context);
}`;
const REGISTER = `data:text/javascript,${encodeURIComponent(
  `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`,
)}`;

const SAMPLE = join(ROOT, 'fixtures/samples/agent-session.json');

let home: string | undefined;
afterEach(() => {
  if (home) rmSync(home, { recursive: true, force: true });
  home = undefined;
});

async function run(args: string[]): Promise<{ stdout: string; loaded: string[] }> {
  home ??= mkdtempSync(join(tmpdir(), 'svc-bundle-'));
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    ['--import', REGISTER, BIN, ...args],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: home, SERVICE_HOME: join(home, '.svc') },
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const loaded = stderr
    .split('\n')
    .filter((l) => l.startsWith('LOADED '))
    .map((l) => l.slice('LOADED '.length));
  return { stdout, loaded };
}

describe('svc compress runs from the bundle the build makes (issue 19: start-up)', () => {
  it('loads the bundle instead of the engine modules, and prints what the modules print', async () => {
    const bundled = await run(['compress', '--no-record', SAMPLE]);
    expect(bundled.loaded.some((u) => u.endsWith('/dist/src/cli-bundle/compress-command.js'))).toBe(true);
    // the engine comes with the bundle (flag parsing loads a few config modules of its own)
    const engine = (u: string) => u.endsWith('/dist/src/engine/index.js');
    expect(bundled.loaded.filter(engine)).toEqual([]);
    // `-o` goes through oclif, which runs the same command from its modules
    const out = join(home!, 'out.json');
    const modules = await run(['compress', '--no-record', SAMPLE, '-o', out]);
    expect(modules.loaded.some(engine)).toBe(true);
    expect(modules.loaded.some((u) => u.includes('/cli-bundle/'))).toBe(false);
    // what the bundle saves: loading ~110 modules one by one
    const own = (list: string[]) => list.filter((u) => u.includes('/dist/src/')).length;
    expect(own(bundled.loaded)).toBeLessThan(30);
    expect(own(modules.loaded)).toBeGreaterThan(100);
    const written = readFileSync(out, 'utf8');
    expect(JSON.parse(written).tokens_saved).toBeGreaterThan(0);
    expect(bundled.stdout).toBe(written);
  });
});
