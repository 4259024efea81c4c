import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVER_GLIBC_TUNABLES, serverEnv } from '../../src/agents/wrap.js';
import { BIN, ROOT } from '../cli/helpers.js';
import { childEnv, type Mock, mockUpstream, type ServeProcess, startServe } from './helpers.js';

const CLAUDE = join(ROOT, 'node_modules', '.bin', 'claude');
const hasClaude = existsSync(CLAUDE);
const CODEX = join(ROOT, 'node_modules', '.bin', 'codex');
const hasCodex = existsSync(CODEX);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `svc wrap ...` with the agents of node_modules/.bin (and fakes in `extraPath`) on PATH. */
function wrap(args: string[], home: string, env: Record<string, string>, extraPath = ''): Promise<Run> {
  const base = childEnv(home, env);
  const PATH = [extraPath, join(ROOT, 'node_modules', '.bin'), base.PATH].filter(Boolean).join(delimiter);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'wrap', ...args], {
      env: { ...base, PATH },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Claude Code's environment: a dummy key, no non-essential traffic, and a
 * dead loopback proxy for anything that is not loopback, so nothing leaves the machine.
 */
const claudeEnv = (upstream: Mock): Record<string, string> => ({
  ANTHROPIC_API_KEY: 'sk-ant-test-not-a-key',
  MESSAGES_TARGET_API_URL: `${upstream.url}/v1`,
  COMPAT_TARGET_API_URL: `${upstream.url}/v1`,
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  HTTPS_PROXY: 'http://127.0.0.1:9',
  HTTP_PROXY: 'http://127.0.0.1:9',
  NO_PROXY: '127.0.0.1,localhost',
});

describe('svc wrap', () => {
  let home: string;
  let upstream: Mock;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'svc-wrap-'));
    upstream = await mockUpstream();
  });
  afterAll(async () => {
    await upstream?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('runs the agent with svc for this run, forwards its exit code and prints the savings line', async () => {
    // A stand-in agent that reports what it was given and exits 7.
    const bin = mkdtempSync(join(tmpdir(), 'svc-fake-agent-'));
    for (const name of ['claude', 'codex']) {
      writeFileSync(
        join(bin, name),
        `#!${process.execPath}\nconsole.log(JSON.stringify({ base: process.env.ANTHROPIC_BASE_URL ?? null, args: process.argv.slice(2) }));\nprocess.exit(7);\n`,
      );
      chmodSync(join(bin, name), 0o755);
    }
    try {
      const env = {
        MESSAGES_TARGET_API_URL: `${upstream.url}/v1`,
        COMPAT_TARGET_API_URL: `${upstream.url}/v1`,
        SERVICE_PORT: '9',
      };
      const claude = await wrap(['claude', '-p', 'hello', '--model', 'x'], home, env, bin);
      expect(claude.code, claude.stderr).toBe(7);
      const seen = JSON.parse(claude.stdout) as { base: string; args: string[] };
      expect(seen.base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(seen.args).toEqual(['-p', 'hello', '--model', 'x']);
      expect(claude.stderr).toMatch(/svc: started svc serve at http:\/\/127\.0\.0\.1:\d+ for this run/);
      expect(claude.stderr).toMatch(/^svc: 0 requests through http:\/\/127\.0\.0\.1:\d+, 0 tokens saved/m);
      // The server it started is gone.
      await expect(fetch(`${seen.base}/health`)).rejects.toThrow();

      const codex = await wrap(['codex', '--', 'exec', 'fix it'], home, env, bin);
      expect(codex.code).toBe(7);
      const c = JSON.parse(codex.stdout) as { args: string[] };
      expect(c.args.slice(-2)).toEqual(['exec', 'fix it']);
      expect(c.args).toContain('model_provider="svc"');
      expect(c.args).toContain('model_providers.svc.wire_api="responses"');
      expect(c.args.find((a) => a.startsWith('model_providers.svc.base_url='))).toMatch(
        /="http:\/\/127\.0\.0\.1:\d+\/v1"$/,
      );

      const missing = await wrap(['claude'], home, { ...env, SVC_CLAUDE_BIN: join(bin, 'nope') });
      expect(missing.code).toBe(127);
      expect(missing.stderr).toMatch(
        /not found on PATH; install it:\s+(›\s+)?npm install -g\s+(›\s+)?@anthropic-ai\/claude-code/,
      );
      // Checked before anything starts: no server for an agent that cannot run.
      expect(missing.stderr).not.toContain('started svc serve');
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  }, 90_000);
});

describe.skipIf(!hasClaude)(
  'svc wrap with the real Claude Code CLI (skipped only when it is not installed)',
  () => {
    let home: string;
    let upstream: Mock;
    let serve: ServeProcess;
    beforeAll(async () => {
      home = mkdtempSync(join(tmpdir(), 'svc-wrap-claude-'));
      upstream = await mockUpstream();
      serve = await startServe(home, [
        '--messages-api-url',
        `${upstream.url}/v1`,
        '--compat-api-url',
        `${upstream.url}/v1`,
      ]);
    }, 30_000);
    afterAll(async () => {
      await serve?.stop();
      await upstream?.close();
      rmSync(home, { recursive: true, force: true });
    });

    it('svc wrap claude -p through a running svc: exit 0, its requests in /stats, the savings line', async () => {
      const before = upstream.requests.length;
      const port = new URL(serve.url).port;
      const run = await wrap(['claude', '-p', 'Say hello.'], home, {
        ...claudeEnv(upstream),
        SERVICE_PORT: port,
      });
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(run.stdout).toContain('Hello from the mock upstream.');
      const calls = upstream.requests
        .slice(before)
        .filter((r) => r.method === 'POST' && r.path.startsWith('/v1/messages'));
      expect(calls.length).toBeGreaterThan(0);
      // The key Claude Code sent went upstream through svc.
      expect(calls[0]?.headers['x-api-key']).toBe('sk-ant-test-not-a-key');
      const stats = (await (await fetch(`${serve.url}/stats`)).json()) as { requests: { total: number } };
      expect(stats.requests.total).toBeGreaterThanOrEqual(calls.length);
      const line = run.stderr.split('\n').find((l) => l.startsWith('svc: '));
      expect(line).toMatch(
        new RegExp(
          `^svc: [1-9]\\d* requests? through ${serve.url.replace(/[.]/g, '\\.')}, [\\d,]+ tokens saved`,
        ),
      );
    }, 120_000);

    it('svc wrap claude -p with no server running starts one on a free port', async () => {
      const run = await wrap(['claude', '-p', 'Say hello.'], home, {
        ...claudeEnv(upstream),
        SERVICE_PORT: '9',
      });
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(run.stdout).toContain('Hello from the mock upstream.');
      expect(run.stderr).toMatch(
        /^svc: [1-9]\d* requests? through http:\/\/127\.0\.0\.1:\d+, [\d,]+ tokens saved/m,
      );
    }, 120_000);
  },
);

/**
 * Codex's environment: a dummy key in OPENAI_API_KEY (svc wrap names it as
 * the provider's env_key), its own CODEX_HOME (no update check, no analytics,
 * no plugin sync, nothing of the user's), and `proxy` (a loopback proxy that forwards nothing)
 * for anything that is not loopback, so nothing leaves the machine.
 */
function codexEnv(upstream: Mock, codexHome: string, proxy: string): Record<string, string> {
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(
    join(codexHome, 'config.toml'),
    [
      'check_for_update_on_startup = false',
      '[analytics]',
      'enabled = false',
      // Plugin catalogue syncs reach github.com, api.github.com and chatgpt.com at start-up.
      '[features]',
      'plugins = false',
      '',
    ].join('\n'),
  );
  return {
    OPENAI_API_KEY: 'sk-test-not-a-key',
    CODEX_HOME: codexHome,
    COMPAT_TARGET_API_URL: `${upstream.url}/v1`,
    MESSAGES_TARGET_API_URL: `${upstream.url}/v1`,
    HTTPS_PROXY: proxy,
    HTTP_PROXY: proxy,
    ALL_PROXY: proxy,
    https_proxy: proxy,
    http_proxy: proxy,
    all_proxy: proxy,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  };
}

describe.skipIf(!hasCodex)('svc wrap with the real Codex CLI (skipped only when it is not installed)', () => {
  let home: string;
  let upstream: Mock;
  let serve: ServeProcess;
  let proxy: Server;
  let proxyUrl: string;
  // What tried to leave through the proxy (each connection is closed unanswered).
  const leaks: string[] = [];
  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'svc-wrap-codex-'));
    upstream = await mockUpstream();
    proxy = createServer((socket) => {
      socket.once('data', (d: Buffer) => {
        leaks.push(d.toString().split('\r\n')[0] ?? '');
        socket.destroy();
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    serve = await startServe(home, [
      '--messages-api-url',
      `${upstream.url}/v1`,
      '--compat-api-url',
      `${upstream.url}/v1`,
    ]);
  }, 30_000);
  afterAll(async () => {
    await serve?.stop();
    await upstream?.close();
    await new Promise((r) => proxy?.close(r));
    rmSync(home, { recursive: true, force: true });
  });

  it('svc wrap codex exec through a running svc: exit 0, its /v1/responses requests in /stats, the savings line', async () => {
    const before = upstream.requests.length;
    const statsBefore = (await (await fetch(`${serve.url}/stats`)).json()) as { requests: { total: number } };
    const port = new URL(serve.url).port;
    const run = await wrap(
      ['codex', 'exec', '--skip-git-repo-check', '-m', 'gpt-5-mini', 'Say hello.'],
      home,
      { ...codexEnv(upstream, join(home, 'codex-home'), proxyUrl), SERVICE_PORT: port },
    );
    const seen = upstream.requests.slice(before);
    const out = `${run.stdout}\n${run.stderr}\n${seen.map((r) => `${r.method} ${r.path}`).join('\n')}`;
    expect(run.code, out).toBe(0);
    expect(run.stdout, out).toContain('Hello from the mock upstream.');
    const calls = seen.filter((r) => r.method === 'POST' && r.path === '/v1/responses');
    expect(calls.length, out).toBeGreaterThan(0);
    // Codex's request, with the key it was given, went upstream through svc.
    expect(calls[0]?.headers.authorization).toBe('Bearer sk-test-not-a-key');
    const body = JSON.parse(calls[0]?.body ?? '{}') as {
      model?: string;
      stream?: boolean;
      input?: unknown[];
    };
    expect(body.model).toBe('gpt-5-mini');
    expect(body.stream).toBe(true);
    expect(Array.isArray(body.input)).toBe(true);
    const stats = (await (await fetch(`${serve.url}/stats`)).json()) as { requests: { total: number } };
    expect(stats.requests.total - statsBefore.requests.total).toBeGreaterThanOrEqual(calls.length);
    const line = run.stderr.split('\n').find((l) => l.startsWith('svc: '));
    expect(line, out).toMatch(
      new RegExp(
        `^svc: [1-9]\\d* requests? through ${serve.url.replace(/[.]/g, '\\.')}, [\\d,]+ tokens saved`,
      ),
    );
    // Nothing tried to go anywhere but loopback.
    expect(leaks).toEqual([]);
  }, 120_000);

  it('svc wrap codex exec with no server running starts one on a free port', async () => {
    const before = upstream.requests.length;
    const run = await wrap(
      ['codex', 'exec', '--skip-git-repo-check', '-m', 'gpt-5-mini', 'Say hello.'],
      home,
      { ...codexEnv(upstream, join(home, 'codex-home-2'), proxyUrl), SERVICE_PORT: '9' },
    );
    const out = `${run.stdout}\n${run.stderr}`;
    expect(run.code, out).toBe(0);
    expect(run.stdout, out).toContain('Hello from the mock upstream.');
    expect(run.stderr).toMatch(/svc: started svc serve at http:\/\/127\.0\.0\.1:\d+ for this run/);
    expect(run.stderr).toMatch(
      /^svc: [1-9]\d* requests? through http:\/\/127\.0\.0\.1:\d+, [\d,]+ tokens saved/m,
    );
    const calls = upstream.requests
      .slice(before)
      .filter((r) => r.method === 'POST' && r.path === '/v1/responses');
    expect(calls.length, out).toBeGreaterThan(0);
    expect(leaks).toEqual([]);
  }, 120_000);
});

describe('the server svc wrap starts: glibc malloc settings (issue 19)', () => {
  it('adds GLIBC_TUNABLES on Linux, keeps a value the user set, and leaves other platforms alone', () => {
    expect(serverEnv({ PATH: '/bin' }, 'linux')).toEqual({
      PATH: '/bin',
      GLIBC_TUNABLES: SERVER_GLIBC_TUNABLES,
    });
    expect(serverEnv({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }, 'linux').GLIBC_TUNABLES).toBe(
      'glibc.malloc.arena_max=2',
    );
    expect(serverEnv({ PATH: '/bin' }, 'darwin')).toEqual({ PATH: '/bin' });
    // the thresholds svc serve sets on itself (src/server/malloc.ts)
    expect(SERVER_GLIBC_TUNABLES).toBe(
      'glibc.malloc.mmap_threshold=524288:glibc.malloc.trim_threshold=1048576',
    );
  });
});
