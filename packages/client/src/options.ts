import { SvcClientError } from './errors.js';
import type { CompressCallOptions, CompressionClientOptions } from './types.js';

/** Defaults of spec section 1 (companion client library) and 8.3. */
export const CLIENT_DEFAULTS = {
  baseUrl: 'http://localhost:8787',
  timeout: 30_000,
  fallback: true,
  retries: 1,
} as const satisfies Required<Pick<CompressionClientOptions, 'baseUrl' | 'timeout' | 'fallback' | 'retries'>>;

/** Client options with every default applied and validated. */
export interface ResolvedClientOptions {
  baseUrl: string;
  apiKey: string | undefined;
  model: string | undefined;
  timeout: number;
  fallback: boolean;
  retries: number;
  headers: Record<string, string>;
  fetch: typeof fetch;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  random: () => number;
}

/** The options of one call: the client's, overridden by the call's. */
export interface ResolvedCallOptions extends ResolvedClientOptions {
  signal: AbortSignal | undefined;
  bypass: boolean;
}

const MAX_TIMEOUT = 2_147_483_647;
const MAX_RETRIES = 10;

/** Reads an env var where there is a `process` (Node, Bun, Deno); empty counts as unset. */
function readEnv(name: string): string | undefined {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  const value = proc?.env?.[name];
  return value === undefined || value === '' ? undefined : value;
}

function badOption(message: string): SvcClientError {
  return new SvcClientError('SVC_CLIENT_BAD_OPTION', message);
}

function checkTimeout(value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > MAX_TIMEOUT) {
    throw badOption(`timeout must be a number of milliseconds in (0, ${MAX_TIMEOUT}], got ${String(value)}`);
  }
  return value;
}

function checkRetries(value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > MAX_RETRIES) {
    throw badOption(`retries must be an integer from 0 to ${MAX_RETRIES}, got ${String(value)}`);
  }
  return value;
}

function checkFallback(value: boolean): boolean {
  if (typeof value !== 'boolean') throw badOption(`fallback must be true or false, got ${String(value)}`);
  return value;
}

function checkBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badOption(
      `baseUrl must be an http(s) URL such as http://localhost:8787, got ${JSON.stringify(value)}`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw badOption(`baseUrl must use http or https, got ${url.protocol}`);
  }
  if (url.username || url.password) throw badOption('baseUrl must not hold credentials; use apiKey');
  return url.href.replace(/\/+$/, '');
}

/** A wait that ends early (rejecting) when the signal aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Applies defaults (option, then env, then default) and validates; throws `SVC_CLIENT_BAD_OPTION`. */
export function resolveClientOptions(options: CompressionClientOptions = {}): ResolvedClientOptions {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function')
    throw badOption('no fetch available: pass options.fetch (Node 18+ has one)');
  return {
    baseUrl: checkBaseUrl(options.baseUrl ?? readEnv('SERVICE_BASE_URL') ?? CLIENT_DEFAULTS.baseUrl),
    apiKey: options.apiKey ?? readEnv('SERVICE_API_KEY'),
    model: options.model,
    timeout: checkTimeout(options.timeout ?? CLIENT_DEFAULTS.timeout),
    fallback: checkFallback(options.fallback ?? CLIENT_DEFAULTS.fallback),
    retries: checkRetries(options.retries ?? CLIENT_DEFAULTS.retries),
    headers: { ...options.headers },
    fetch: fetchImpl,
    sleep: options.sleep ?? abortableSleep,
    random: options.random ?? Math.random,
  };
}

/** Merges one call's overrides into the client's resolved options. */
export function resolveCallOptions(
  base: ResolvedClientOptions,
  call: CompressCallOptions = {},
): ResolvedCallOptions {
  return {
    ...base,
    model: call.model ?? base.model,
    timeout: call.timeout === undefined ? base.timeout : checkTimeout(call.timeout),
    fallback: call.fallback === undefined ? base.fallback : checkFallback(call.fallback),
    retries: call.retries === undefined ? base.retries : checkRetries(call.retries),
    signal: call.signal,
    bypass: call.bypass ?? false,
  };
}
