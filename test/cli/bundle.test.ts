import { type ChildProcess, execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type MockUpstream,
  postMessages,
  replyJson,
  spawnServe,
  startMockUpstream,
} from '../server/helpers.js';
import { MESSAGES_REPLY } from '../server/sse-mocks.js';
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
const LOADER = JSON.stringify(pathToFileURL(join(ROOT, 'dist/src/cli/cached-bundle.cjs')).href);

let home: string | undefined;
let upstream: MockUpstream | undefined;
const children: ChildProcess[] = [];
afterEach(async () => {
  if (home) rmSync(home, { recursive: true, force: true });
  home = undefined;
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await upstream?.close();
  upstream = undefined;
});

/** The file modules a process named on stderr (see `HOOKS`), as file URLs. */
function loadedIn(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('LOADED '))
    .map((l) => l.slice('LOADED '.length));
}

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
  return { stdout, loaded: loadedIn(stderr) };
}

describe('svc compress and svc serve run from the bundle the build makes (issue 19: start-up)', () => {
  it('loads the bundle instead of the engine modules, and prints what the modules print', async () => {
    const bundled = await run(['compress', '--no-record', SAMPLE]);
    // bin/run.js (CommonJS) runs the CommonJS bundle through cached-bundle.cjs: no ES module of svc
    // (the ES module bundle's files included) is loaded, not even to parse the flags
    expect(bundled.loaded.filter((u) => u.includes('/dist/'))).toEqual([]);
    const engine = (u: string) => u.endsWith('/dist/src/engine/index.js');
    // `-o` goes through oclif, which runs the same command from its modules
    const out = join(home!, 'out.json');
    const modules = await run(['compress', '--no-record', SAMPLE, '-o', out]);
    expect(modules.loaded.some(engine)).toBe(true);
    expect(modules.loaded.some((u) => u.includes('/cli-bundle/'))).toBe(false);
    // what the bundle saves: loading ~110 modules one by one
    expect(modules.loaded.filter((u) => u.includes('/dist/src/')).length).toBeGreaterThan(100);
    const written = readFileSync(out, 'utf8');
    expect(JSON.parse(written).tokens_saved).toBeGreaterThan(0);
    expect(bundled.stdout).toBe(written);
  });

  it('svc compress runs with the code cache the build made, and the same without it', async () => {
    // as bin/run.js runs it, in a process of its own: V8 takes the cache only under the flags it was made with
    const probe = `import { loadCachedBundle } from ${LOADER};
      const { cacheUsed, exports } = loadCachedBundle(process.argv[1]);
      process.stderr.write('CACHE ' + cacheUsed + '\\n');
      if (!(await exports.fastPath(['--no-record', process.argv[2]]))) process.exitCode = 9;`;
    const bundle = join(ROOT, 'dist/src/cli-bundle/compress.cjs');
    home = mkdtempSync(join(tmpdir(), 'svc-bundle-'));
    const probeWith = async (flags: string[]) => {
      const { stdout, stderr } = await promisify(execFile)(
        process.execPath,
        [...flags, '--input-type=module', '-e', probe, bundle, SAMPLE],
        {
          env: { PATH: process.env.PATH ?? '', SERVICE_HOME: join(home!, '.svc') },
          maxBuffer: 16 * 1024 * 1024,
        },
      );
      return { stdout, cacheUsed: /CACHE (\w+)/.exec(stderr)?.[1] };
    };
    const cached = await probeWith([]);
    expect(cached.cacheUsed).toBe('true');
    // another heap limit changes V8's flags: it refuses the cache and compiles from the source
    const fresh = await probeWith(['--max-old-space-size=300']);
    expect(fresh.cacheUsed).toBe('false');
    const viaBin = await run(['compress', '--no-record', SAMPLE]);
    expect(JSON.parse(viaBin.stdout).tokens_saved).toBeGreaterThan(0);
    expect(cached.stdout).toBe(viaBin.stdout);
    expect(fresh.stdout).toBe(viaBin.stdout);
  });

  it('svc serve loads the bundle instead of the server modules, and serves from it', async () => {
    upstream = await startMockUpstream((_req, res) => replyJson(res, 200, MESSAGES_REPLY));
    // a large-body threshold every request passes: the bundled server must find its worker's script
    const proc = await spawnServe(
      upstream.url,
      ['--large-body-bytes', '1000', '--log-level', 'debug', '--no-cache'],
      ['--import', REGISTER],
    );
    children.push(proc.child);
    home = proc.home;
    const loaded = loadedIn(proc.stderr());
    // bin/run.js (CommonJS) runs the CommonJS bundle through cached-bundle.cjs: no ES module of svc
    // is loaded (~150 of them without the bundle), nor the packages it imports at start (bundled too)
    expect(loaded.filter((u) => u.includes('/dist/'))).toEqual([]);
    expect(loaded.filter((u) => /\/node_modules\/(polka|lowdb|prom-client)\//.test(u))).toEqual([]);
    // the dashboard's files are found from the bundle
    const page = await fetch(`${proc.url}/dashboard`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<html');
    const script = await fetch(`${proc.url}/dashboard/assets/main.js`);
    expect(script.status).toBe(200);
    // a body over the threshold goes to the large-body worker, whose script is in dist/src
    const log = 'ERROR 2025-01-01T00:00:00Z service=api path=/v1/items status=500\n'.repeat(400);
    const res = await postMessages(
      proc.url,
      JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 10,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'why?' }] },
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'cat x' } }],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: log }] },
        ],
      }),
    );
    expect(res.status).toBe(200);
    expect(proc.stderr()).toContain('request body read in the large-body worker');
    expect(upstream.requests.at(-1)!.body.length).toBeLessThan(log.length);
    // undici, imported lazily, loaded as an ES module from node_modules for the upstream call
    expect(loadedIn(proc.stderr()).some((u) => u.includes('/node_modules/undici/'))).toBe(true);
  }, 30_000);

  it('svc serve starts with the code cache the build made', async () => {
    // loading runs the bundle's top level only; a process of its own, as bin/run.js runs it
    const probe = `import { loadCachedBundle } from ${LOADER};
      const { cacheUsed, exports } = loadCachedBundle(process.argv[1]);
      process.stdout.write(cacheUsed + ' ' + typeof exports.fastPath);`;
    const bundle = join(ROOT, 'dist/src/cli-bundle/serve.cjs');
    const probeWith = async (flags: string[]) =>
      (
        await promisify(execFile)(process.execPath, [...flags, '--input-type=module', '-e', probe, bundle], {
          env: { PATH: process.env.PATH ?? '' },
        })
      ).stdout;
    expect(await probeWith([])).toBe('true function');
    expect(await probeWith(['--max-old-space-size=300'])).toBe('false function');
  });
});
