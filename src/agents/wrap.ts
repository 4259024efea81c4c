import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../config/options.js';
import { MALLOC_TUNABLES } from '../server/malloc.js';
import { CODEX_WIRE_API, claudeBaseUrl, codexBaseUrl } from './paths.js';

export type AgentName = 'claude' | 'codex';
export const AGENTS: readonly AgentName[] = ['claude', 'codex'];

/** What `svc wrap` runs: the agent's command line and environment for this run only. */
export interface AgentLaunch {
  command: string;
  args: string[];
  env: Record<string, string | undefined>;
}

/**
 * Claude Code: `ANTHROPIC_BASE_URL` without `/v1` (it adds the path itself).
 * Codex: a provider entry through `-c` overrides (`model_providers.svc` with
 * `base_url` .../v1 and `wire_api = "responses"`, selected by
 * `model_provider`), so its config.toml is left as it is.
 */
export function agentLaunch(
  agent: AgentName,
  svcUrl: string,
  args: readonly string[],
  env: Record<string, string | undefined> = process.env,
): AgentLaunch {
  if (agent === 'claude') {
    return {
      command: env.SVC_CLAUDE_BIN || 'claude',
      args: [...args],
      env: { ...env, ANTHROPIC_BASE_URL: claudeBaseUrl(svcUrl) },
    };
  }
  const auth = env.OPENAI_API_KEY ? 'env_key="OPENAI_API_KEY"' : 'requires_openai_auth=true';
  const overrides = [
    'model_provider="svc"',
    'model_providers.svc.name="svc"',
    `model_providers.svc.base_url="${codexBaseUrl(svcUrl)}"`,
    `model_providers.svc.wire_api="${CODEX_WIRE_API}"`,
    `model_providers.svc.${auth}`,
  ];
  return {
    command: env.SVC_CODEX_BIN || 'codex',
    args: [...overrides.flatMap((o) => ['-c', o]), ...args],
    env: { ...env },
  };
}

/** The server's counters that a run's summary compares. */
export interface StatsPoint {
  requests: number;
  tokensIn: number;
  tokensSaved: number;
  savedUsd: number;
  retrievals: number;
}

export async function statsPoint(url: string): Promise<StatsPoint | undefined> {
  try {
    const res = await fetch(`${url}/stats`, { signal: AbortSignal.timeout(2000) });
    if (!res.ok) return undefined;
    const s = (await res.json()) as {
      requests: { total: number };
      tokens: { input: number; saved: number };
      cost: { total_savings_usd: number };
      retrievals?: { total: number };
    };
    return {
      requests: s.requests.total,
      tokensIn: s.tokens.input,
      tokensSaved: s.tokens.saved,
      savedUsd: s.cost.total_savings_usd,
      retrievals: s.retrievals?.total ?? 0,
    };
  } catch {
    return undefined;
  }
}

/** The one line printed when the agent exits. */
export function summaryLine(
  before: StatsPoint | undefined,
  after: StatsPoint | undefined,
  url: string,
): string {
  if (!after) return `svc: ${url} did not answer /stats at the end of the run; savings unknown`;
  const b = before ?? { requests: 0, tokensIn: 0, tokensSaved: 0, savedUsd: 0, retrievals: 0 };
  const requests = after.requests - b.requests;
  const tokensIn = after.tokensIn - b.tokensIn;
  const saved = after.tokensSaved - b.tokensSaved;
  const usd = after.savedUsd - b.savedUsd;
  const pct = tokensIn > 0 ? ` (${((100 * saved) / tokensIn).toFixed(1)}%)` : '';
  const money = usd > 0 ? `, $${usd >= 1 ? usd.toFixed(2) : usd.toFixed(4)} saved` : '';
  const retrieved = after.retrievals - b.retrievals;
  const markers = retrieved > 0 ? `, ${retrieved} marker${retrieved === 1 ? '' : 's'} redeemed` : '';
  return `svc: ${requests} request${requests === 1 ? '' : 's'} through ${url}, ${saved.toLocaleString('en-US')} tokens saved${pct}${money}${markers}`;
}

/** True when an svc server answers /health at `url`. */
export async function svcAnswers(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1500) });
    const body = (await res.json()) as { status?: string; version?: string };
    return res.ok && body.status === 'ok' && typeof body.version === 'string';
  } catch {
    return false;
  }
}

/** A server this run started (its own process group, so the terminal's Ctrl-C does not reach it). */
export interface OwnServer {
  url: string;
  logPath: string;
  stop(): Promise<void>;
}

/**
 * glibc's malloc thresholds for the server svc starts itself: the ones
 * `svc serve` sets on itself (src/server/malloc.ts), given in the environment
 * so they hold from the process's first allocation, and also where koffi,
 * which `svc serve` sets them through, is not installed.
 */
export const SERVER_GLIBC_TUNABLES = MALLOC_TUNABLES;

/** The environment of a server svc starts: this one, with `SERVER_GLIBC_TUNABLES` on Linux unless set. */
export function serverEnv(
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): NodeJS.ProcessEnv {
  if (platform !== 'linux' || env.GLIBC_TUNABLES !== undefined) return env;
  return { ...env, GLIBC_TUNABLES: SERVER_GLIBC_TUNABLES };
}

/**
 * Starts `svc serve` on a free loopback port (the same CLI, the same
 * environment: upstreams, store, state files, plus `serverEnv`'s malloc
 * settings); its log goes to a file.
 */
export function startOwnServer(
  config: Config,
  bin: string,
  extraArgs: readonly string[] = [],
): Promise<OwnServer> {
  const logDir = join(config.home, 'logs');
  mkdirSync(logDir, { recursive: true });
  const logPath = join(logDir, `wrap-${process.pid}.log`);
  const log = createWriteStream(logPath, { flags: 'a' });
  const child = spawn(process.execPath, [bin, 'serve', '--host', '127.0.0.1', '--port', '0', ...extraArgs], {
    env: serverEnv(process.env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let seen = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`svc serve did not start within 20 s (log: ${logPath})`));
    }, 20_000);
    const onData = (d: Buffer) => {
      log.write(d);
      seen += d.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(seen);
      if (m?.[1]) {
        clearTimeout(timer);
        const url = m[1];
        seen = '';
        resolve({ url, logPath, stop: () => stopChild(child, log) });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      log.end();
      reject(new Error(`svc serve exited (code ${code}) before listening:\n${seen.trim()}`));
    });
  });
}

function stopChild(child: ChildProcess, log: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      log.end();
      return resolve();
    }
    const kill = setTimeout(() => child.kill('SIGKILL'), 12_000);
    child.once('exit', () => {
      clearTimeout(kill);
      log.end();
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Runs the agent with the terminal, forwarding SIGTERM and SIGHUP (and SIGINT
 * when there is no terminal: on a terminal Ctrl-C already reaches the agent,
 * which decides what it means). Resolves with its exit code (128 + signal
 * number when a signal ended it), or rejects when it cannot be started.
 */
export function runAgent(launch: AgentLaunch): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(launch.command, launch.args, {
      env: launch.env as NodeJS.ProcessEnv,
      stdio: 'inherit',
    });
    const forward = (signal: NodeJS.Signals) => () => {
      if (signal === 'SIGINT' && process.stdin.isTTY) return;
      child.kill(signal);
    };
    const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((s) => [s, forward(s)] as const);
    for (const [s, h] of handlers) process.on(s, h);
    const done = () => {
      for (const [s, h] of handlers) process.off(s, h);
    };
    child.once('error', (err) => {
      done();
      reject(err);
    });
    child.once('exit', (code, signal) => {
      done();
      if (signal) resolve(128 + (constants.signals[signal] ?? 0));
      else resolve(code ?? 1);
    });
  });
}
