import { accessSync, constants, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parse } from 'jsonc-parser';

type Env = Record<string, string | undefined>;

/** Claude Code's user settings file: `$CLAUDE_CONFIG_DIR/settings.json`, default `~/.claude/settings.json`. */
export function claudeSettingsPath(env: Env = process.env): string {
  return join(env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), '.claude'), 'settings.json');
}

/** Codex's config file: `$CODEX_HOME/config.toml`, default `~/.codex/config.toml`. */
export function codexConfigPath(env: Env = process.env): string {
  return join(env.CODEX_HOME || join(env.HOME || homedir(), '.codex'), 'config.toml');
}

/** The base URL Claude Code gets for svc: the server address, without `/v1` (Claude Code adds it). */
export function claudeBaseUrl(svcUrl: string): string {
  return svcUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** The base URL of Codex's provider entry: the server address with `/v1`. */
export function codexBaseUrl(svcUrl: string): string {
  return `${claudeBaseUrl(svcUrl)}/v1`;
}

/** True when `url` names the same host and port as `svcUrl` (loopback names are one host). */
export function pointsAt(url: string, svcUrl: string): boolean {
  if (!URL.canParse(url) || !URL.canParse(svcUrl)) return false;
  const a = new URL(url);
  const b = new URL(svcUrl);
  const loop = (h: string) => (['localhost', '127.0.0.1', '[::1]', '::1'].includes(h) ? 'loopback' : h);
  const port = (u: URL) => u.port || (u.protocol === 'https:' ? '443' : '80');
  return loop(a.hostname) === loop(b.hostname) && port(a) === port(b);
}

/** A file's text, or undefined when it does not exist. */
export async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** `env.ANTHROPIC_BASE_URL` of Claude Code's settings file, if it sets one. */
export async function claudeSettingsBaseUrl(env: Env = process.env): Promise<string | undefined> {
  const text = await readText(claudeSettingsPath(env)).catch(() => undefined);
  if (text === undefined) return undefined;
  // Claude Code accepts comments and trailing commas in its settings.
  const parsed = parse(text, [], { allowTrailingComma: true }) as
    | { env?: Record<string, unknown> }
    | undefined;
  const v = parsed?.env?.ANTHROPIC_BASE_URL;
  return typeof v === 'string' ? v : undefined;
}

export interface CodexProviders {
  /** The top-level `model_provider`. */
  modelProvider: string | undefined;
  /** `base_url` and `wire_api` of each `[model_providers.NAME]` table. */
  providers: Record<string, { base_url?: string; wire_api?: string }>;
}

/**
 * What Codex's config.toml selects (a light reader for these keys only,
 * enough to check the setup and to show what `svc setup codex` changes).
 */
export function readCodexProviders(toml: string): CodexProviders {
  let table = '';
  let modelProvider: string | undefined;
  const providers: CodexProviders['providers'] = {};
  for (const raw of toml.split('\n')) {
    const line = raw.replace(/\s+#.*$/, '').trim();
    const header = /^\[([^\]]+)\]$/.exec(line);
    if (header) {
      table = (header[1] ?? '').trim();
      continue;
    }
    const kv = /^([A-Za-z0-9_.-]+)\s*=\s*"([^"]*)"$/.exec(line);
    if (!kv) continue;
    const key = kv[1] ?? '';
    const value = kv[2] ?? '';
    if (table === '' && key === 'model_provider') modelProvider = value;
    const p = /^model_providers\.("?)([^"]+)\1$/.exec(table);
    const name = p?.[2];
    if (name && (key === 'base_url' || key === 'wire_api')) {
      const entry = providers[name] ?? {};
      entry[key] = value;
      providers[name] = entry;
    }
  }
  return { modelProvider, providers };
}

/** The executable `command` resolves to (a path, or a name looked up in `PATH`), or undefined. */
export function findOnPath(command: string, path = process.env.PATH ?? ''): string | undefined {
  const runnable = (p: string) => {
    try {
      accessSync(p, constants.X_OK);
      return statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (command.includes('/')) return runnable(command) ? command : undefined;
  for (const dir of path.split(delimiter)) {
    if (dir && runnable(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

/**
 * The `wire_api` a Codex provider entry needs for Codex to speak the
 * Responses API to it (Codex's own configuration vocabulary), which svc
 * serves at `/v1/responses`.
 */
export const CODEX_WIRE_API = 'responses';
