import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { parseScoreWeights } from '../engine/context/weights.js';
import { SvcError } from '../errors.js';
import { type Config, OPTIONS, type OptionSpec } from './options.js';

export interface ResolveConfigOptions {
  /** Parsed flags keyed by flag name (`'cache-ttl'`); undefined means not given. */
  flags?: Record<string, unknown>;
  env?: Record<string, string | undefined>;
}

const FALSE_WORDS = new Set(['0', 'false', 'off', 'no', 'disabled']);
const TRUE_WORDS = new Set(['1', 'true', 'on', 'yes', 'enabled']);

function fail(spec: OptionSpec, source: string, message: string): never {
  throw new SvcError('SVC_BAD_CONFIG', `${source}: ${message}`, { details: { option: spec.key } });
}

function sourceName(spec: OptionSpec, fromFlag: boolean): string {
  return fromFlag ? `--${spec.flag}` : `${spec.env}`;
}

function coerce(spec: OptionSpec, raw: unknown, fromFlag: boolean): unknown {
  const where = sourceName(spec, fromFlag);
  switch (spec.kind) {
    case 'boolean': {
      if (typeof raw === 'boolean') return raw;
      const word = String(raw).trim().toLowerCase();
      if (TRUE_WORDS.has(word)) return true;
      if (FALSE_WORDS.has(word)) return false;
      return fail(spec, where, `expected on/off, got "${raw}"`);
    }
    case 'integer':
    case 'number': {
      const n = typeof raw === 'number' ? raw : Number(String(raw).trim());
      if (String(raw).trim() === '' || !Number.isFinite(n))
        return fail(spec, where, `expected a number, got "${raw}"`);
      if (spec.kind === 'integer' && !Number.isInteger(n))
        return fail(spec, where, `expected a whole number, got "${raw}"`);
      const low = spec.min;
      if (low !== undefined && (spec.minExclusive ? n <= low : n < low)) {
        const range = `${spec.minExclusive ? '(' : '['}${low}, ${spec.max ?? '∞'}${spec.max === undefined ? ')' : ']'}`;
        return fail(spec, where, `${n} is outside ${range}`);
      }
      if (spec.max !== undefined && n > spec.max)
        return fail(spec, where, `${n} is above the maximum ${spec.max}`);
      return n;
    }
    case 'list': {
      const items = Array.isArray(raw) ? raw.map(String) : String(raw).split(',');
      return items.map((s) => s.trim()).filter((s) => s.length > 0);
    }
    case 'string': {
      const s = String(raw);
      if (spec.choices && !spec.choices.includes(s)) {
        return fail(spec, where, `"${s}" is not one of ${spec.choices.join(', ')}`);
      }
      return s;
    }
  }
}

function expandHome(path: string, home: string): string {
  let p = path.replace(/^<home>/, home);
  if (p === '~' || p.startsWith('~/')) p = join(homedir(), p.slice(1));
  return isAbsolute(p) ? p : resolve(p);
}

/** Checks an upstream URL; errors name the flag or variable the value came from, as users type it. */
function checkUrl(where: string, value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch (cause) {
    throw new SvcError('SVC_BAD_CONFIG', `${where}: "${value}" is not a URL`, { cause });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SvcError('SVC_BAD_CONFIG', `${where}: "${value}" must be an http(s) URL`);
  }
}

/**
 * Settles the configuration: flag, then environment, then default.
 * Throws an SvcError (SVC_BAD_CONFIG) naming the option and allowed values.
 *
 * @example resolveConfig({ flags: { port: 9000 }, env: process.env })
 */
export function resolveConfig(options: ResolveConfigOptions = {}): Config {
  const flags = options.flags ?? {};
  const env = options.env ?? process.env;
  const out: Record<string, unknown> = {};
  /** Where each option's value came from, as users type it: `--port`, `SERVICE_PORT`. */
  const from = new Map<keyof Config, string>();
  for (const spec of OPTIONS) {
    const flagValue = spec.flag === undefined ? undefined : flags[spec.flag];
    const envValue = spec.env === undefined ? undefined : env[spec.env];
    if (flagValue !== undefined && !(Array.isArray(flagValue) && flagValue.length === 0)) {
      out[spec.key] = coerce(spec, flagValue, true);
      from.set(spec.key, sourceName(spec, true));
    } else if (envValue !== undefined && envValue !== '') {
      out[spec.key] = coerce(spec, envValue, false);
      from.set(spec.key, sourceName(spec, false));
    } else {
      out[spec.key] = spec.default;
      from.set(spec.key, spec.flag ? `--${spec.flag}` : `${spec.env}`);
    }
  }
  const config = out as unknown as Config;
  config.home = expandHome(config.home, homedir());
  config.savingsPath = expandHome(config.savingsPath, config.home);
  config.ccrPath = expandHome(config.ccrPath, config.home);
  config.toinPath = expandHome(config.toinPath, config.home);
  config.mlcompressModel = expandHome(config.mlcompressModel.replace(/^~\/\.svc/, '<home>'), config.home);
  if (config.logFile) config.logFile = expandHome(config.logFile, config.home);
  if (config.pricingPath) config.pricingPath = expandHome(config.pricingPath, config.home);
  checkUrl(from.get('compatApiUrl') ?? '--compat-api-url', config.compatApiUrl);
  checkUrl(from.get('messagesApiUrl') ?? '--messages-api-url', config.messagesApiUrl);
  config.compatApiUrl = config.compatApiUrl.replace(/\/+$/, '');
  config.messagesApiUrl = config.messagesApiUrl.replace(/\/+$/, '');
  if (config.store !== undefined && !/^rediss?:\/\//.test(config.store)) {
    throw new SvcError(
      'SVC_BAD_CONFIG',
      `${from.get('store') ?? '--store'}: "${config.store.replace(/\/\/[^@/]*@/, '//***@')}" must be redis://HOST:PORT/DB or rediss://...`,
    );
  }
  if (config.scoreWeights !== undefined) parseScoreWeights(config.scoreWeights);
  return config;
}

/** The options that apply to a command, in table order. */
export function optionsFor(command: OptionSpec['commands'][number]): OptionSpec[] {
  return OPTIONS.filter((o) => o.commands.includes(command));
}
