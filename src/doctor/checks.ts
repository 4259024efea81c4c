import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  CODEX_WIRE_API,
  claudeBaseUrl,
  claudeSettingsBaseUrl,
  claudeSettingsPath,
  codexConfigPath,
  pointsAt,
  readCodexProviders,
  readText,
} from '../agents/paths.js';
import type { Config } from '../config/options.js';
import { MALLOC_TUNABLES, mallocControls, onGlibc } from '../server/malloc.js';
import { wrapText } from '../ui/fit-table.js';

export type CheckStatus = 'ok' | 'warn' | 'fail';

/** One line of `svc doctor`. */
export interface Check {
  name: string;
  status: CheckStatus;
  /** What was found. */
  detail: string;
  /** What to do about it (warn and fail). */
  fix?: string;
}

export interface DoctorOptions {
  config: Config;
  /** The svc server to check (`--url`). */
  url: string;
  env?: Record<string, string | undefined>;
  /** Per network check, ms. */
  timeoutMs?: number;
}

const ok = (name: string, detail: string): Check => ({ name, status: 'ok', detail });
const warn = (name: string, detail: string, fix: string): Check => ({ name, status: 'warn', detail, fix });
const fail = (name: string, detail: string, fix: string): Check => ({ name, status: 'fail', detail, fix });

function reasonOf(err: unknown): string {
  const e = err as {
    name?: string;
    cause?: { code?: string; message?: string };
    code?: string;
    message?: string;
  };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return 'no answer in time';
  return e?.cause?.code ?? e?.code ?? e?.cause?.message ?? e?.message ?? String(err);
}

async function getJson(url: string, timeoutMs: number): Promise<Record<string, unknown>> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return (await res.json()) as Record<string, unknown>;
}

/** The server answers `/health` as svc. */
async function serverCheck(o: DoctorOptions): Promise<{ check: Check; up: boolean }> {
  try {
    const health = await getJson(`${o.url}/health`, o.timeoutMs ?? 2000);
    if (health.status !== 'ok' || typeof health.version !== 'string')
      throw new Error('not an svc /health answer');
    const mode = health.optimize === false ? ', passthrough mode (--no-optimize)' : '';
    return { check: ok('server', `svc ${health.version} answers at ${o.url}${mode}`), up: true };
  } catch (err) {
    return {
      check: fail(
        'server',
        `no svc server answers at ${o.url} (${reasonOf(err)})`,
        'start it: svc serve (or run your agent with svc wrap claude|codex, which starts one); another address: svc doctor --url URL',
      ),
      up: false,
    };
  }
}

/** An upstream answers a HEAD on its base URL (any HTTP status counts: no model call, no key needed). */
async function upstreamCheck(
  name: string,
  url: string,
  flag: string,
  env: string,
  timeoutMs: number,
): Promise<Check> {
  try {
    const res = await fetch(url, {
      method: 'HEAD',
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    });
    return ok(name, `${url} reachable (HTTP ${res.status} to a HEAD)`);
  } catch (err) {
    return fail(
      name,
      `${url} unreachable (${reasonOf(err)})`,
      `check the network or proxy, or point svc at the right upstream: --${flag} URL or ${env}=URL`,
    );
  }
}

/** The nearest existing folder of a path that does not exist yet. */
async function existingAncestor(path: string): Promise<string> {
  let p = path;
  for (;;) {
    try {
      await stat(p);
      return p;
    } catch {
      const up = dirname(p);
      if (up === p) return p;
      p = up;
    }
  }
}

/**
 * Whether svc can write `path` (a file, or a folder with `folder`). A file or
 * folder without any write permission is reported even to root, whom the
 * system would let write it: a server running as its owner could not.
 */
async function writableCheck(name: string, path: string, envName: string, folder = false): Promise<Check> {
  const target = await existingAncestor(path);
  const creating = target !== path;
  try {
    const s = await stat(target);
    if (!creating && folder !== s.isDirectory())
      return fail(
        name,
        `${path} is not a ${folder ? 'folder' : 'file'}`,
        `remove it or set ${envName} to another path`,
      );
    await access(target, constants.W_OK);
    if ((s.mode & 0o222) === 0) throw Object.assign(new Error('read-only'), { code: 'EACCES' });
    return ok(name, creating ? `${path} will be created in ${target}` : `${path} writable`);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    return fail(
      name,
      `${creating ? `${target} (where ${path} would be created)` : path} is not writable (${code})`,
      `make it writable (chmod u+w ${target}) or set ${envName} to a writable path`,
    );
  }
}

/** Claude Code: ANTHROPIC_BASE_URL in the environment or its settings file. */
async function claudeCheck(o: DoctorOptions): Promise<Check> {
  const env = o.env ?? process.env;
  const fromEnv = env.ANTHROPIC_BASE_URL;
  const fromFile = await claudeSettingsBaseUrl(env);
  const fix = `run it through svc: svc wrap claude, or persist it: svc setup claude --write (sets ANTHROPIC_BASE_URL=${claudeBaseUrl(o.url)} in ${claudeSettingsPath(env)})`;
  for (const [where, value] of [
    ['ANTHROPIC_BASE_URL', fromEnv],
    [claudeSettingsPath(env), fromFile],
  ] as const) {
    if (value === undefined || value === '') continue;
    if (!pointsAt(value, o.url)) return warn('claude code', `${where} is ${value}, not svc at ${o.url}`, fix);
    if (/\/v1\/?$/.test(value))
      return warn(
        'claude code',
        `${where} is ${value}: Claude Code adds /v1 itself`,
        `use ${claudeBaseUrl(o.url)} (no /v1)`,
      );
    return ok('claude code', `${where} points at svc (${value})`);
  }
  return warn('claude code', 'not configured for svc (no ANTHROPIC_BASE_URL)', fix);
}

/** Codex: its config.toml selects a provider whose base_url is svc, with wire_api = "responses". */
async function codexCheck(o: DoctorOptions): Promise<Check> {
  const env = o.env ?? process.env;
  const path = codexConfigPath(env);
  const fix = `run it through svc: svc wrap codex, or persist it: svc setup codex --write (a [model_providers.svc] entry in ${path})`;
  const text = await readText(path).catch(() => undefined);
  if (text === undefined) return warn('codex', `${path} not found`, fix);
  const { modelProvider, providers } = readCodexProviders(text);
  const chosen = modelProvider ? providers[modelProvider] : undefined;
  if (!modelProvider || !chosen?.base_url)
    return warn('codex', `${path} selects no provider pointing at svc`, fix);
  if (!pointsAt(chosen.base_url, o.url))
    return warn(
      'codex',
      `model_provider "${modelProvider}" uses ${chosen.base_url}, not svc at ${o.url}`,
      fix,
    );
  if (chosen.wire_api !== CODEX_WIRE_API)
    return warn(
      'codex',
      `model_provider "${modelProvider}" has wire_api "${chosen.wire_api ?? 'chat'}"`,
      'set wire_api = "responses" (svc setup codex --write)',
    );
  return ok('codex', `model_provider "${modelProvider}" points at svc (${chosen.base_url})`);
}

async function mlCheck(config: Config): Promise<Check> {
  const { ML_INSTALL_HINT, mlPreflight } = await import('../ml/detect.js');
  const line = mlPreflight({
    enabled: true,
    device: config.mlcompressDevice,
    rate: config.mlcompressRate,
    modelDir: config.mlcompressModel,
  });
  if (!line) return ok('ml compression', `runtime installed, model in ${config.mlcompressModel}`);
  const fix = line.text.includes('not installed')
    ? ML_INSTALL_HINT
    : `put config.json, tokenizer.json and model.onnx in ${config.mlcompressModel} (or set SERVICE_MLCOMPRESS_MODEL)`;
  return fail('ml compression', line.text.replace(/^ML compression: /, ''), fix);
}

async function redisCheck(config: Config, timeoutMs: number): Promise<Check> {
  const { connectSharedStore, redactUrl } = await import('../store/redis.js');
  const { silentLogger } = await import('../log.js');
  const url = config.store ?? '';
  try {
    const store = await connectSharedStore({
      url,
      prefix: config.storePrefix,
      logger: silentLogger,
      connectTimeoutMs: timeoutMs,
    });
    await store.close();
    return ok('redis', `${redactUrl(url)} answers`);
  } catch (err) {
    return fail(
      'redis',
      `${redactUrl(url)} unreachable (${reasonOf(err)})`,
      'start Redis or fix --store / SERVICE_STORE_URL (redis://HOST:PORT/DB); without --store svc keeps its state in local files',
    );
  }
}

/** The server's last requests: were they compressed? */
async function compressionCheck(o: DoctorOptions): Promise<Check> {
  try {
    const stats = await getJson(`${o.url}/stats`, o.timeoutMs ?? 2000);
    const requests = stats.requests as { total: number; by_mode?: Record<string, number> };
    const tokens = stats.tokens as { saved: number; savings_percent: number };
    if (!requests || requests.total === 0)
      return warn(
        'compression',
        'no requests since the server started',
        'send one through svc (svc wrap claude -p "hello"), then run svc doctor again',
      );
    const modes = requests.by_mode ?? {};
    if ((modes.optimize ?? 0) + (modes.compress ?? 0) === 0 && (modes.passthrough ?? 0) > 0)
      return warn(
        'compression',
        `${requests.total} requests, all passed through`,
        'restart svc serve without --no-optimize',
      );
    if (tokens.saved === 0)
      return warn(
        'compression',
        `${requests.total} requests, nothing saved yet`,
        'normal for short conversations; svc compresses large tool outputs (JSON, logs, search results, diffs)',
      );
    return ok(
      'compression',
      `${requests.total} requests, ${tokens.saved.toLocaleString('en-US')} tokens saved (${tokens.savings_percent}%)`,
    );
  } catch (err) {
    return warn(
      'compression',
      `/stats could not be read (${reasonOf(err)})`,
      'check that the server at --url is svc',
    );
  }
}

/**
 * On glibc Linux: whether `svc serve` can fix glibc's malloc thresholds and
 * give memory back after a burst (src/server/malloc.ts), which needs koffi,
 * an optional dependency. No check elsewhere: nothing to do there.
 */
export function memoryCheck(probe = { glibc: onGlibc, controls: mallocControls }): Check | undefined {
  if (!probe.glibc()) return undefined;
  if (probe.controls())
    return ok(
      'memory release',
      'glibc malloc controls available: memory a burst freed goes back to the system',
    );
  return warn(
    'memory release',
    'koffi (optional dependency) not installed: after a burst of large requests svc serve keeps the memory they freed',
    `install svc without --omit=optional, or start svc serve with GLIBC_TUNABLES=${MALLOC_TUNABLES}`,
  );
}

/** Every check, in the order printed. */
export async function runChecks(o: DoctorOptions): Promise<Check[]> {
  const { config } = o;
  const t = o.timeoutMs ?? 3000;
  const server = await serverCheck(o);
  const checks = await Promise.all([
    upstreamCheck(
      'messages upstream',
      config.messagesApiUrl,
      'messages-api-url',
      'MESSAGES_TARGET_API_URL',
      t,
    ),
    upstreamCheck('chat upstream', config.compatApiUrl, 'compat-api-url', 'COMPAT_TARGET_API_URL', t),
    claudeCheck(o),
    codexCheck(o),
    writableCheck('savings file', config.savingsPath, 'SERVICE_SAVINGS_PATH'),
    writableCheck('ccr store', config.ccrPath, 'SERVICE_CCR_PATH', true),
    writableCheck('toin file', config.toinPath, 'SERVICE_TOIN_PATH'),
    ...(config.mlcompress ? [mlCheck(config)] : []),
    ...(config.store ? [redisCheck(config, t)] : []),
    ...(server.up ? [compressionCheck(o)] : []),
  ]);
  const memory = memoryCheck();
  if (memory) checks.push(memory);
  return [server.check, ...checks];
}

/** The text report: one line per check, a fix line under each warn and fail, a summary line. */
export function formatChecks(checks: readonly Check[], color = false, width = 80): string {
  const paint = (s: CheckStatus, text: string) =>
    color ? `\u001b[${s === 'ok' ? 32 : s === 'warn' ? 33 : 31}m${text}\u001b[39m` : text;
  const nameWidth = Math.max(...checks.map((c) => c.name.length));
  const indent = ' '.repeat(6 + nameWidth + 2);
  const wrap = (text: string) => wrapText(text, Math.max(20, width - indent.length)).split('\n');
  const lines: string[] = [];
  for (const c of checks) {
    const [first, ...rest] = wrap(c.detail);
    lines.push(`${paint(c.status, c.status.padEnd(4))}  ${c.name.padEnd(nameWidth)}  ${first ?? ''}`);
    for (const l of rest) lines.push(indent + l);
    if (c.fix) {
      const fix = wrapText(c.fix, Math.max(20, width - indent.length - 5)).split('\n');
      for (const [i, l] of fix.entries()) lines.push(`${indent}${i === 0 ? 'fix: ' : '     '}${l}`);
    }
  }
  const failed = checks.filter((c) => c.status === 'fail').length;
  const warned = checks.filter((c) => c.status === 'warn').length;
  lines.push('', `${failed} failed, ${warned} warnings, ${checks.length - failed - warned} ok`);
  return `${lines.join('\n')}\n`;
}
