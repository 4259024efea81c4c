import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentLaunch } from '../../src/agents/wrap.js';
import type { BreakdownRecord } from '../../src/stats/breakdown.js';
import { ROOT } from '../cli/helpers.js';
import { childEnv, type Mock, mockUpstream, type ServeProcess, startServe } from './helpers.js';

// Issue 18, item 7 with the real agents: Claude Code and Codex pointed at a
// /p/NAME/ base URL (they cannot set x-svc-project) are counted for that
// project and recognised by their own user agents.

const BIN_DIR = join(ROOT, 'node_modules', '.bin');
const hasAgents = existsSync(join(BIN_DIR, 'claude')) && existsSync(join(BIN_DIR, 'codex'));

let home: string;
let upstream: Mock;
let serve: ServeProcess;
let proxy: Server;
let proxyUrl: string;

/** Runs an agent as `svc wrap` would launch it, with `base` as svc's address. */
function runAgent(
  agent: 'claude' | 'codex',
  base: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  const launch = agentLaunch(agent, base, args, { ...childEnv(home, env) });
  return new Promise((resolve, reject) => {
    const child = spawn(join(BIN_DIR, agent), launch.args, {
      env: { ...(launch.env as Record<string, string>), PATH: [BIN_DIR, process.env.PATH].join(delimiter) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe.skipIf(!hasAgents)(
  'attribution of the real Claude Code and Codex CLIs (skipped when not installed)',
  () => {
    beforeAll(async () => {
      home = mkdtempSync(join(tmpdir(), 'svc-attrib-agents-'));
      upstream = await mockUpstream();
      // A loopback proxy that forwards nothing: whatever is not loopback goes nowhere.
      proxy = createServer((socket) => socket.destroy());
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

    it('counts Claude Code under /p/claudeproj and Codex under /p/codexproj, each by its user agent', async () => {
      const noTraffic = {
        HTTPS_PROXY: proxyUrl,
        HTTP_PROXY: proxyUrl,
        ALL_PROXY: proxyUrl,
        https_proxy: proxyUrl,
        http_proxy: proxyUrl,
        all_proxy: proxyUrl,
        NO_PROXY: '127.0.0.1,localhost',
        no_proxy: '127.0.0.1,localhost',
      };
      const claude = await runAgent('claude', `${serve.url}/p/claudeproj`, ['-p', 'Say hello.'], {
        ...noTraffic,
        ANTHROPIC_API_KEY: 'sk-ant-test-not-a-key',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
      });
      expect(claude.code, claude.out).toBe(0);
      const codexHome = join(home, 'codex-home');
      mkdirSync(codexHome, { recursive: true });
      writeFileSync(
        join(codexHome, 'config.toml'),
        'check_for_update_on_startup = false\n[analytics]\nenabled = false\n[features]\nplugins = false\n',
      );
      const codex = await runAgent(
        'codex',
        `${serve.url}/p/codexproj`,
        ['exec', '--skip-git-repo-check', '-m', 'gpt-5-mini', 'Say hello.'],
        { ...noTraffic, OPENAI_API_KEY: 'sk-test-not-a-key', CODEX_HOME: codexHome },
      );
      expect(codex.code, codex.out).toBe(0);
      // The prefix never reached the upstream.
      expect(upstream.requests.filter((r) => r.path.startsWith('/p/'))).toEqual([]);
      const stats = (await (await fetch(`${serve.url}/stats`)).json()) as {
        requests: { total: number };
        breakdown: BreakdownRecord;
      };
      const { project, client } = stats.breakdown;
      const posts = (prefix: string) =>
        upstream.requests.filter((r) => r.method === 'POST' && r.path.startsWith(prefix)).length;
      expect(posts('/v1/messages')).toBeGreaterThan(0);
      expect(posts('/v1/responses')).toBeGreaterThan(0);
      expect(upstream.requests.find((r) => r.path.startsWith('/v1/messages'))?.headers['user-agent']).toMatch(
        /^claude-cli\//,
      );
      expect(upstream.requests.find((r) => r.path === '/v1/responses')?.headers['user-agent']).toMatch(
        /^codex_/,
      );
      expect(project.claudeproj?.requests).toBeGreaterThanOrEqual(posts('/v1/messages'));
      expect(project.codexproj?.requests).toBeGreaterThanOrEqual(posts('/v1/responses'));
      expect(client['claude-code']?.requests).toBe(project.claudeproj?.requests);
      expect(client.codex?.requests).toBe(project.codexproj?.requests);
      expect(Object.values(project).reduce((n, r) => n + r.requests, 0)).toBe(stats.requests.total);
    }, 180_000);
  },
);
