import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryCheck } from '../../src/doctor/checks.js';
import { onGlibc } from '../../src/server/malloc.js';
import { runCli } from '../cli/helpers.js';
import { startTestRedis, type TestRedis } from '../helpers/redis-server.js';
import { bigToolOutput, type Mock, mockUpstream, type ServeProcess, startServe } from './helpers.js';

interface Report {
  ok: boolean;
  checks: Array<{ name: string; status: 'ok' | 'warn' | 'fail'; detail: string; fix?: string }>;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('svc doctor', () => {
  let home: string;
  let upstream: Mock;
  let serve: ServeProcess;
  let redis: TestRedis | undefined;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'svc-doctor-'));
    upstream = await mockUpstream();
    serve = await startServe(home, [
      '--messages-api-url',
      `${upstream.url}/v1`,
      '--compat-api-url',
      `${upstream.url}/v1`,
    ]);
    // The agents point at svc: Claude Code's settings file and Codex's config.toml.
    mkdirSync(join(home, '.claude'), { recursive: true });
    writeFileSync(
      join(home, '.claude', 'settings.json'),
      JSON.stringify({ env: { ANTHROPIC_BASE_URL: serve.url } }),
    );
    mkdirSync(join(home, '.codex'), { recursive: true });
    writeFileSync(
      join(home, '.codex', 'config.toml'),
      `model_provider = "svc"\n\n[model_providers.svc]\nname = "svc"\nbase_url = "${serve.url}/v1"\nwire_api = "responses"\n`,
    );
    // One compressed request, so "the last requests were compressed" has something to show.
    const res = await fetch(`${serve.url}/v1/compress`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-4o',
        messages: [
          { role: 'user', content: 'run the tests' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 't', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: bigToolOutput() },
        ],
      }),
    });
    expect(res.status).toBe(200);
    redis = await startTestRedis().catch(() => undefined);
  }, 60_000);
  afterAll(async () => {
    await serve?.stop();
    await upstream?.close();
    await redis?.destroy();
    rmSync(home, { recursive: true, force: true });
  });

  const doctor = (args: string[]) =>
    runCli(
      [
        'doctor',
        '--url',
        serve.url,
        '--messages-api-url',
        `${upstream.url}/v1`,
        '--compat-api-url',
        `${upstream.url}/v1`,
        ...args,
      ],
      home,
    );
  const byName = (r: Report, name: string) => r.checks.find((c) => c.name === name);

  it('a healthy setup: every check ok, exit 0; the upstreams get a HEAD and no model call', async () => {
    const before = upstream.requests.length;
    const run = await doctor(['--json']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as Report;
    expect(report.ok).toBe(true);
    for (const c of report.checks) expect(c.status, `${c.name}: ${c.detail}`).toBe('ok');
    expect(report.checks.map((c) => c.name)).toEqual([
      'server',
      'messages upstream',
      'chat upstream',
      'claude code',
      'codex',
      'savings file',
      'ccr store',
      'toin file',
      'compression',
      ...(onGlibc() ? ['memory release'] : []),
    ]);
    expect(byName(report, 'compression')?.detail).toMatch(/1 requests, [\d,]+ tokens saved/);
    const seen = upstream.requests.slice(before);
    expect(seen.length).toBe(2);
    expect(seen.every((r) => r.method === 'HEAD')).toBe(true);

    const text = await doctor([]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^ok {4}server/m);
    expect(text.stdout).toContain('0 failed');
    expect(text.stdout.split('\n').filter((l) => l.length > 80)).toEqual([]);
  }, 30_000);

  it('the upstream down: fail with its fix, exit 1', async () => {
    const port = await closedPort();
    const run = await runCli(
      [
        'doctor',
        '--url',
        serve.url,
        '--messages-api-url',
        `${upstream.url}/v1`,
        '--compat-api-url',
        `http://127.0.0.1:${port}/v1`,
      ],
      home,
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^fail {2}chat upstream +http:\/\/127\.0\.0\.1:\d+\/v1 unreachable \(ECONNREFUSED\)/m,
    );
    expect(run.stdout).toMatch(/fix: check the network or proxy,[\s\S]*--compat-api-url URL/);
    expect(run.stdout).toMatch(/^ok {4}messages upstream/m);
  }, 30_000);

  it('the savings file read-only: fail with its fix, exit 1', async () => {
    const path = join(home, 'ro', 'proxy_savings.json');
    mkdirSync(join(home, 'ro'), { recursive: true });
    writeFileSync(path, '{}');
    chmodSync(path, 0o444);
    try {
      const run = await runCli(
        [
          'doctor',
          '--json',
          '--url',
          serve.url,
          '--messages-api-url',
          `${upstream.url}/v1`,
          '--compat-api-url',
          `${upstream.url}/v1`,
        ],
        home,
        { env: { SERVICE_SAVINGS_PATH: path } },
      );
      expect(run.code).toBe(1);
      const report = JSON.parse(run.stdout) as Report;
      expect(report.ok).toBe(false);
      const check = byName(report, 'savings file');
      expect(check?.status).toBe('fail');
      expect(check?.detail).toContain(`${path} is not writable`);
      expect(check?.fix).toContain(`chmod u+w ${path}`);
      expect(check?.fix).toContain('SERVICE_SAVINGS_PATH');
    } finally {
      chmodSync(path, 0o644);
    }
  }, 30_000);

  it('Redis: ok while it answers; gone: fail with its fix, exit 1', async () => {
    const url = redis ? redis.url : `redis://127.0.0.1:${await closedPort()}/0`;
    if (redis) {
      const up = await doctor(['--json', '--store', url]);
      expect(up.code, up.stdout).toBe(0);
      expect(byName(JSON.parse(up.stdout) as Report, 'redis')?.status).toBe('ok');
      await redis.stop();
    }
    const down = await doctor(['--json', '--store', url]);
    expect(down.code).toBe(1);
    const check = byName(JSON.parse(down.stdout) as Report, 'redis');
    expect(check?.status).toBe('fail');
    expect(check?.detail).toMatch(/unreachable/);
    expect(check?.fix).toContain('--store');
  }, 60_000);

  it('an agent not pointing at svc is a warning with the setup command, not a failure', async () => {
    const other = mkdtempSync(join(tmpdir(), 'svc-doctor-agents-'));
    try {
      mkdirSync(join(other, '.claude'));
      writeFileSync(
        join(other, '.claude', 'settings.json'),
        JSON.stringify({ env: { ANTHROPIC_BASE_URL: 'https://example.invalid' } }),
      );
      const run = await runCli(
        [
          'doctor',
          '--json',
          '--url',
          serve.url,
          '--messages-api-url',
          `${upstream.url}/v1`,
          '--compat-api-url',
          `${upstream.url}/v1`,
        ],
        other,
      );
      expect(run.code).toBe(0);
      const report = JSON.parse(run.stdout) as Report;
      expect(byName(report, 'claude code')?.status).toBe('warn');
      expect(byName(report, 'claude code')?.fix).toContain('svc setup claude --write');
      expect(byName(report, 'codex')?.status).toBe('warn');
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  }, 30_000);
});

describe('svc doctor: memory release (glibc Linux)', () => {
  it('ok with the malloc controls, a warning with the fix without koffi, no check off glibc', () => {
    expect(memoryCheck({ glibc: () => true, controls: () => true })?.status).toBe('ok');
    const missing = memoryCheck({ glibc: () => true, controls: () => false });
    expect(missing?.status).toBe('warn');
    expect(missing?.fix).toContain('--omit=optional');
    expect(missing?.fix).toContain('GLIBC_TUNABLES=glibc.malloc.mmap_threshold=524288');
    expect(memoryCheck({ glibc: () => false, controls: () => false })).toBeUndefined();
    // this machine: glibc Linux with koffi installed (a dev dependency's install here)
    if (onGlibc()) expect(memoryCheck()?.status).toBe('ok');
  });
});
