import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/index.js';
import { startupLines } from '../../src/server/startup.js';
import { messagesBody } from '../formats/bodies.js';
import { createFakeCompress } from './fake-engine.js';
import { type MockUpstream, replyJson, startMockUpstream, startSvc, type TestSvc, until } from './helpers.js';
import { MESSAGES_REPLY } from './sse-mocks.js';

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
/** CLI processes a test started: killed after each test, so a failing test leaves none behind. */
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

const HEADERS = { 'content-type': 'application/json', 'x-api-key': 'sk-ant-secret-value' };

describe('GET /health', () => {
  it('has every field of the health record, from the same numbers as the request events', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
    svc = await startSvc({
      compress: createFakeCompress(),
      flags: { 'messages-api-url': `${upstream.url}/v1` },
    });
    const empty = await (await fetch(`${svc.url}/health`)).json();
    expect(empty).toMatchObject({
      status: 'ok',
      optimize: true,
      stats: { total_requests: 0, tokens_saved: 0, savings_percent: 0 },
    });
    await fetch(`${svc.url}/v1/messages`, {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify(messagesBody()),
    });
    await until(() => svc!.events.length === 1);
    const res = await fetch(`${svc.url}/health`);
    expect(res.status).toBe(200);
    const health = await res.json();
    const e = svc.events[0]!;
    expect(health.status).toBe('ok');
    expect(health.optimize).toBe(true);
    expect(health.stats.total_requests).toBe(1);
    expect(health.stats.tokens_saved).toBe(e.tokensSaved);
    expect(health.stats.tokens_saved).toBeGreaterThan(0);
    expect(health.stats.savings_percent).toBeCloseTo((e.tokensSaved / e.tokensBefore) * 100, 1);
    expect(typeof health.version).toBe('string');
    expect(Number.isInteger(health.uptime_s)).toBe(true);
  });

  it('reports optimize false in passthrough mode', async () => {
    svc = await startSvc({ flags: { optimize: false } });
    expect((await (await fetch(`${svc.url}/health`)).json()).optimize).toBe(false);
  });
});

describe('--log-file', () => {
  it('writes one JSON line per request, without content or keys', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
    const dir = mkdtempSync(join(tmpdir(), 'svc-log-'));
    const logFile = join(dir, 'nested', 'requests.jsonl');
    svc = await startSvc({
      compress: createFakeCompress(),
      flags: { 'messages-api-url': `${upstream.url}/v1`, 'log-file': logFile },
    });
    await fetch(`${svc.url}/v1/messages`, {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify(messagesBody()),
    });
    await fetch(`${svc.url}/v1/compress`, { method: 'POST', body: '{}' });
    await until(() => svc!.events.length === 2);
    await svc.close();
    svc = undefined;
    const text = readFileSync(logFile, 'utf8');
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      path: '/v1/messages',
      model: 'claude-sonnet-4-5',
      status: 200,
      upstream_status: 200,
      transforms: ['fake:marker'],
    });
    // Whole requests: the forwarded one carries svc's svc_retrieve definition (tokens_added).
    expect(lines[0].tokens_added).toBeGreaterThan(0);
    expect(lines[0].tokens_saved).toBe(
      lines[0].tokens_before - lines[0].tokens_after + lines[0].tokens_added,
    );
    expect(typeof lines[0].latency_ms).toBe('number');
    expect(lines[1]).toMatchObject({ path: '/v1/compress', status: 400 });
    expect(text).not.toContain('sk-ant-secret-value');
    expect(text).not.toContain('quick brown fox');
    expect(text).not.toContain('Find the failing test');
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('telemetry', () => {
  async function collector() {
    return startMockUpstream((_r, res) => replyJson(res, 204 as number, {}));
  }

  it('sends anonymous aggregates only to SERVICE_TELEMETRY_URL', async () => {
    const sink = await collector();
    svc = await startSvc({
      compress: createFakeCompress(),
      env: { SERVICE_TELEMETRY_URL: `${sink.url}/t`, SERVICE_SDK: 'my-app' },
    });
    await fetch(`${svc.url}/v1/compress`, {
      method: 'POST',
      headers: { 'x-api-key': 'sk-secret' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'private words' }] }),
    });
    await svc.close();
    svc = undefined;
    expect(sink.requests).toHaveLength(1);
    const report = JSON.parse(sink.requests[0]!.body.toString());
    expect(report).toMatchObject({ sdk: 'my-app', requests: 1, requests_by_mode: { compress: 1 } });
    expect(Object.keys(report).sort()).toEqual(
      [
        'arch',
        'compression_failures',
        'node',
        'platform',
        'requests',
        'requests_by_mode',
        'sdk',
        'tokens_before',
        'tokens_saved',
        'uptime_s',
        'version',
      ].sort(),
    );
    const raw = sink.requests[0]!.body.toString();
    expect(raw).not.toContain('private words');
    expect(raw).not.toContain('sk-secret');
    expect(raw).not.toContain('127.0.0.1');
    await sink.close();
  });

  it.each([
    ['--no-telemetry', { flags: { telemetry: false } }],
    ['SERVICE_TELEMETRY=off', { env: { SERVICE_TELEMETRY: 'off' } }],
  ])('%s: nothing is sent', async (_name, extra) => {
    const sink = await collector();
    svc = await startSvc({
      ...extra,
      env: { SERVICE_TELEMETRY_URL: `${sink.url}/t`, ...(extra as { env?: Record<string, string> }).env },
    });
    await fetch(`${svc.url}/health`);
    await svc.close();
    svc = undefined;
    expect(sink.requests).toHaveLength(0);
    await sink.close();
  });

  it('the default label is proxy', () => {
    expect(resolveConfig({ env: {} }).sdk).toBe('proxy');
  });
});

describe('start-up lines', () => {
  const config = (flags: Record<string, unknown> = {}) =>
    resolveConfig({ flags, env: { SERVICE_HOME: tmpdir() } });
  const text = (lines: { text: string }[]) => lines.map((l) => l.text).join('\n');

  it('name address, mode and upstreams', () => {
    const out = text(
      startupLines(config({ 'no-optimize': true, optimize: false }), 'http://127.0.0.1:8787', false),
    );
    expect(out).toContain('http://127.0.0.1:8787');
    expect(out).toContain('passthrough');
    expect(out).toContain('https://api.anthropic.com/v1');
    expect(out).toContain('https://api.openai.com/v1');
  });

  it('ML enabled and loaded: a line with the device it loaded on and the rate', () => {
    const lines = startupLines(
      config({ mlcompress: true, 'mlcompress-device': 'auto', 'mlcompress-rate': '0.5' }),
      'u',
      true,
      'cpu',
    );
    expect(text(lines)).toContain('ML compression: enabled (device=cpu, rate=0.5)');
  });

  it('ML enabled and installed but no model: a warning naming the expected folder', () => {
    const ml = startupLines(config({ mlcompress: true, 'mlcompress-model': '/nowhere/m' }), 'u', true).find(
      (l) => l.text.startsWith('ML'),
    );
    expect(ml).toMatchObject({ level: 'warn' });
    expect(ml!.text).toContain('/nowhere/m');
  });

  it('ML installed but not enabled: a hint', () => {
    expect(text(startupLines(config(), 'u', true))).toContain('start with --mlcompress');
  });

  it('ML enabled but not installed: a warning with the install command', () => {
    const ml = startupLines(config({ mlcompress: true }), 'u', false).find((l) => l.text.startsWith('ML'));
    expect(ml).toMatchObject({ level: 'warn' });
    expect(ml!.text).toContain('npm install onnxruntime-node @huggingface/tokenizers');
  });

  it('ML neither: no ML line', () => {
    expect(text(startupLines(config(), 'u', false))).not.toContain('ML');
  });
});

describe('svc serve (the built CLI)', () => {
  it('prints its address, serves, and on SIGTERM lets an in-flight request finish, then exits 0', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    upstream = await startMockUpstream(async (_r, res) => {
      await gate;
      replyJson(res, 200, MESSAGES_REPLY);
    });
    const home = mkdtempSync(join(tmpdir(), 'svc-serve-'));
    const child = spawn(
      process.execPath,
      ['bin/run.js', 'serve', '--port', '0', '--messages-api-url', `${upstream.url}/v1`, '--no-telemetry'],
      {
        env: { ...process.env, SERVICE_HOME: home },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    children.push(child);
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    await until(() => /listening on (http:\/\/\S+)/.test(stderr), 15_000);
    const url = /listening on (http:\/\/\S+)/.exec(stderr)![1]!;
    const inflight = fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify(messagesBody()),
    });
    await until(() => upstream!.requests.length === 1, 15_000);
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.kill('SIGTERM');
    await until(() => stderr.includes('SIGTERM'), 15_000);
    release();
    const res = await inflight;
    expect(res.status).toBe(200);
    expect(await exited).toBe(0);
    rmSync(home, { recursive: true, force: true });
  });

  it('a port in use or an unusable --log-file: one clear line and a non-zero exit', async () => {
    const busy = await startMockUpstream(() => undefined);
    const port = new URL(busy.url).port;
    const file = join(mkdtempSync(join(tmpdir(), 'svc-file-')), 'not-a-dir');
    writeFileSync(file, '');
    const run = (extra: string[]) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, ['bin/run.js', 'serve', '--no-telemetry', ...extra], {
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        children.push(child);
        let stderr = '';
        child.stderr.on('data', (d) => {
          stderr += d;
        });
        child.on('exit', (code) => resolve({ code, stderr }));
      });
    const inUse = await run(['--port', port]);
    expect(inUse.code).toBe(1);
    expect(inUse.stderr).toContain('EADDRINUSE');
    const badLog = await run(['--port', '0', '--log-file', join(file, 'x.jsonl')]);
    expect(badLog.code).toBe(2);
    expect(badLog.stderr).toContain('--log-file');
    await busy.close();
  });

  it('refuses an invalid option at start with a clear message', async () => {
    const child = spawn(process.execPath, ['bin/run.js', 'serve', '--port', '70000'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    expect(code).toBe(2);
    expect(stderr).toContain('--port');
  });
});
