/**
 * The two packages as a user gets them: `npm pack` each, install both
 * tarballs into a scratch project, then run the installed `svc compress` on a
 * shipped sample, import the root export, start the installed `svc serve` and
 * call the client's `compress()` against it.
 *
 * The install is offline: the scratch project's lock file is the repository
 * lock's production part (same versions, same integrity hashes), so
 * `npm ci --offline` takes every package from npm's cache, which the README's
 * `npm ci` filled. Nothing leaves the machine.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, until } from '../server/helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');

interface LockEntry {
  version?: string;
  resolved?: string;
  dev?: boolean;
  devOptional?: boolean;
  link?: boolean;
  [key: string]: unknown;
}

let scratch: string;
let rootTgz: string;
let clientTgz: string;
const children: ChildProcess[] = [];

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  return execFileSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** `npm pack` of the package in `dir` into `dest`; returns the tarball's file name. */
function pack(dir: string, dest: string): string {
  const out = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dest], dir);
  const [info] = JSON.parse(out) as Array<{ filename: string }>;
  return info!.filename;
}

/** The scratch project's lock: both tarballs plus the production packages of the repository's lock. */
function scratchLock(rootPkg: Record<string, unknown>, clientPkg: Record<string, unknown>) {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const packages: Record<string, unknown> = {
    '': {
      name: 'scratch',
      dependencies: { 'svc-proxy': `file:${rootTgz}`, 'svc-proxy-client': `file:${clientTgz}` },
    },
    'node_modules/svc-proxy': {
      version: rootPkg.version,
      resolved: `file:${rootTgz}`,
      dependencies: rootPkg.dependencies,
      bin: rootPkg.bin,
      engines: rootPkg.engines,
    },
    'node_modules/svc-proxy-client': {
      version: clientPkg.version,
      resolved: `file:${clientTgz}`,
      engines: clientPkg.engines,
    },
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!path.startsWith('node_modules/') || entry.dev || entry.devOptional || entry.link) continue;
    if (path === 'node_modules/svc-proxy-client') continue;
    packages[path] = entry;
  }
  return { name: 'scratch', lockfileVersion: 3, requires: true, packages };
}

beforeAll(() => {
  // `npm test` builds first (pretest); when this file runs alone, build now.
  if (
    !existsSync(join(ROOT, 'dist/vendor/o200k_base.js')) ||
    !existsSync(join(ROOT, 'packages/client/dist'))
  ) {
    run('npm', ['run', 'build'], ROOT);
  }
  scratch = mkdtempSync(join(tmpdir(), 'svc-packed-'));
  rootTgz = pack(ROOT, scratch);
  clientTgz = pack(join(ROOT, 'packages/client'), scratch);
  const rootPkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
  const clientPkg = JSON.parse(readFileSync(join(ROOT, 'packages/client/package.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  writeFileSync(
    join(scratch, 'package.json'),
    JSON.stringify({
      name: 'scratch',
      private: true,
      type: 'module',
      dependencies: { 'svc-proxy': `file:${rootTgz}`, 'svc-proxy-client': `file:${clientTgz}` },
    }),
  );
  writeFileSync(join(scratch, 'package-lock.json'), JSON.stringify(scratchLock(rootPkg, clientPkg), null, 2));
  run('npm', ['ci', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], scratch);
}, 240_000);

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('the packed packages, installed as a user installs them', () => {
  it('ship what runs and nothing else: no dev tools, no ML runtime, a client with no dependencies', () => {
    const installed = (name: string) => existsSync(join(scratch, 'node_modules', name));
    expect(installed('svc-proxy/dist/src/index.js')).toBe(true);
    expect(installed('svc-proxy/dist/vendor/o200k_base.js')).toBe(true);
    for (const name of [
      'typescript',
      'vitest',
      'gpt-tokenizer',
      'tiktoken',
      'onnxruntime-node',
      'rolldown',
    ]) {
      expect(installed(name), name).toBe(false);
    }
    const client = JSON.parse(
      readFileSync(join(scratch, 'node_modules/svc-proxy-client/package.json'), 'utf8'),
    );
    expect(client.dependencies ?? {}).toEqual({});
  });

  it('`svc compress` of the shipped sample compresses it', () => {
    const sample = join(scratch, 'node_modules/svc-proxy/fixtures/samples/agent-session.json');
    const home = mkdtempSync(join(tmpdir(), 'svc-packed-home-'));
    const out = run(join(scratch, 'node_modules/.bin/svc'), ['compress', sample, '--no-record'], scratch, {
      ...process.env,
      SERVICE_HOME: home,
    });
    const result = JSON.parse(out) as { tokens_before: number; tokens_saved: number; messages: unknown[] };
    expect(result.messages.length).toBeGreaterThan(0);
    expect(result.tokens_saved).toBeGreaterThan(0);
    rmSync(home, { recursive: true, force: true });
  });

  it('`svc mcp` answers an MCP client over stdio with its bundled SDK', async () => {
    const home = mkdtempSync(join(tmpdir(), 'svc-packed-mcp-'));
    const client = new Client({ name: 'packed-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: join(scratch, 'node_modules/.bin/svc'),
        args: ['mcp', '--url', 'http://127.0.0.1:9'],
        cwd: scratch,
        env: { ...(process.env as Record<string, string>), SERVICE_HOME: home },
        stderr: 'pipe',
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['svc_compress', 'svc_retrieve', 'svc_stats']);
    } finally {
      await client.close();
      rmSync(home, { recursive: true, force: true });
    }
  }, 30_000);

  it('the root export is the engine: compressMessages runs in-process', () => {
    const script = `
      import { compressMessages, parseMarkers } from 'svc-proxy';
      const rows = Array.from({ length: 200 }, (_, i) => ({ id: 'ord_' + i, status: i % 9 ? 'ok' : 'failed', total: i * 7 }));
      const messages = [
        { role: 'user', content: 'which orders failed?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'orders', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: JSON.stringify(rows) },
      ];
      const { result, ccrEntries } = compressMessages(messages, { model: 'gpt-4o' });
      console.log(JSON.stringify({ saved: result.tokens_saved, entries: ccrEntries.size, markers: parseMarkers(result.messages[2].content).length }));
    `;
    const out = JSON.parse(run(process.execPath, ['--input-type=module', '-e', script], scratch));
    expect(out.saved).toBeGreaterThan(0);
    expect(out.entries).toBeGreaterThan(0);
    expect(out.markers).toBeGreaterThan(0);
  });

  it('`svc serve --mlcompress` without the ML runtime: serves, and its warning names the install command', async () => {
    const home = mkdtempSync(join(tmpdir(), 'svc-packed-ml-'));
    const child = spawn(
      join(scratch, 'node_modules/.bin/svc'),
      ['serve', '--port', '0', '--mlcompress', '--no-telemetry'],
      {
        cwd: scratch,
        env: { ...process.env, SERVICE_HOME: home },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    await until(() => /ML compression:/.test(stderr) || child.exitCode !== null, 20_000);
    expect(stderr).toMatch(/listening on/);
    expect(stderr).not.toMatch(/typescript/i);
    expect(stderr).toContain(
      'runtime is not installed; running without it. Install with: ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node @huggingface/tokenizers',
    );
    child.kill('SIGTERM');
    rmSync(home, { recursive: true, force: true });
  }, 30_000);

  it("the client's compress() works against the installed `svc serve`", async () => {
    const upstream = await startMockUpstream(() => undefined);
    const home = mkdtempSync(join(tmpdir(), 'svc-packed-serve-'));
    const child = spawn(
      join(scratch, 'node_modules/.bin/svc'),
      ['serve', '--port', '0', '--compat-api-url', `${upstream.url}/v1`, '--no-telemetry'],
      { cwd: scratch, env: { ...process.env, SERVICE_HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    await until(() => /listening on (http:\/\/\S+)/.test(stderr) || child.exitCode !== null, 20_000);
    expect(stderr).toMatch(/listening on/);
    const url = /listening on (http:\/\/\S+)/.exec(stderr)![1]!;
    const script = `
      import { compress } from 'svc-proxy-client';
      const lines = Array.from({ length: 300 }, (_, i) => '2026-11-24T10:00:' + String(i % 60).padStart(2, '0') + ' INFO worker ' + (i % 7) + ' processed batch ' + i + ' in 12ms');
      lines[150] = '2026-11-24T10:02:30 ERROR worker 3 failed batch 150: connection reset';
      const messages = [
        { role: 'user', content: 'why did batch 150 fail?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'logs', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: lines.join('\\n') },
      ];
      const r = await compress(messages, { model: 'gpt-4o', baseUrl: ${JSON.stringify(url)}, fallback: false });
      console.log(JSON.stringify({ compressed: r.compressed, saved: r.tokensSaved, kept: r.messages[2].content.includes('failed batch 150') }));
    `;
    const out = JSON.parse(run(process.execPath, ['--input-type=module', '-e', script], scratch));
    expect(out).toEqual({ compressed: true, saved: expect.any(Number), kept: true });
    expect(out.saved).toBeGreaterThan(0);
    child.kill('SIGTERM');
    await upstream.close();
    rmSync(home, { recursive: true, force: true });
  }, 60_000);
});
