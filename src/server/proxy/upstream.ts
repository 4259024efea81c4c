import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Agent, Pool } from 'undici';
import { SvcError } from '../../errors.js';
import type { CancelSignal, ProxyExchange, UpstreamCall, UpstreamClient } from '../context.js';
import { type UndiciParts, undiciParts } from './undici-parts.js';

export type { CancelSignal, UpstreamCall, UpstreamClient } from '../context.js';

/**
 * Cancels one proxied request's upstream calls when its client goes away.
 * undici takes an event emitter with `aborted` as a request's signal; an
 * `AbortController` costs several microseconds to make in Node 20 (its
 * signal is an EventTarget), on every request.
 */
export class RequestCancel extends EventEmitter implements CancelSignal {
  aborted = false;

  /** Marks the request cancelled and tells the upstream calls in flight (once). */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}

/** Headers that describe one connection, not the message (RFC 9110 7.6.1), plus ones svc sets itself. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

const NOT_FORWARDED = new Set([
  ...HOP_BY_HOP,
  'host',
  'content-length',
  'expect',
  'x-service-bypass',
  'x-service-cache',
  'x-svc-project',
]);

/** The sets of one-token `Connection` values seen (`keep-alive`, `close`: a handful), never modified. */
const oneToken = new Map<string, ReadonlySet<string>>();

function connectionTokens(value: string | string[] | undefined): ReadonlySet<string> | undefined {
  if (value === undefined) return undefined;
  // one token, the common case (`keep-alive`, `close`)
  if (typeof value === 'string' && !value.includes(',')) {
    let set = oneToken.get(value);
    if (!set) {
      const token = value.trim().toLowerCase();
      set = token === '' ? new Set() : new Set([token]);
      if (oneToken.size >= 64) oneToken.clear();
      oneToken.set(value, set);
    }
    return set;
  }
  const text = Array.isArray(value) ? value.join(',') : (value ?? '');
  return new Set(
    text
      .split(',')
      .map((t) => t.trim().toLowerCase())
      .filter(Boolean),
  );
}

/**
 * Request headers to send upstream, in the client's order and spelling: the
 * client's credentials and provider headers go; hop-by-hop headers, `host`,
 * `content-length` (recomputed) and svc's own headers do not.
 * `content-encoding` goes only when the body is sent as received.
 */
export function upstreamRequestHeaders(rawHeaders: string[], encoding: string | undefined): string[] {
  const out: string[] = [];
  let named: ReadonlySet<string> | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    const lower = name.toLowerCase();
    if (lower === 'connection') named = connectionTokens(rawHeaders[i + 1]);
  }
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    const lower = name.toLowerCase();
    if (NOT_FORWARDED.has(lower) || named?.has(lower) || lower === 'content-encoding') continue;
    out.push(name, rawHeaders[i + 1]!);
  }
  if (encoding) out.push('content-encoding', encoding);
  return out;
}

/** Response headers to relay to the client (flat name/value list), without hop-by-hop ones. */
export function clientResponseHeaders(
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
): string[] {
  const named = connectionTokens(headers.connection);
  const out: string[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP.has(name) || named?.has(name)) continue;
    if (Array.isArray(value)) for (const v of value) out.push(name, v);
    else out.push(name, value);
  }
  return out;
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** True when an upstream error is a timeout (504) rather than a failure to connect or a reset (502). */
export function isUpstreamTimeout(err: unknown): boolean {
  const code = (err as { code?: string })?.code;
  return code !== undefined && TIMEOUT_CODES.has(code);
}

/** Maps an undici failure to svc's error: timeout -> 504, anything else -> 502. */
export function upstreamError(err: unknown, url: string): SvcError {
  const origin = new URL(url).origin;
  if (isUpstreamTimeout(err)) {
    return new SvcError('SVC_UPSTREAM_TIMEOUT', `upstream ${origin} did not answer in time`, { cause: err });
  }
  const code = (err as { code?: string })?.code ?? (err as Error)?.name ?? 'error';
  return new SvcError(
    'SVC_UPSTREAM_UNREACHABLE',
    `upstream ${origin} unreachable or reset the connection (${code})`,
    {
      cause: err,
    },
  );
}

/**
 * How long an idle upstream connection is kept for reuse when the upstream names no `Keep-Alive: timeout`.
 * Shorter than the idle timeouts of common servers and load balancers (node's 5 s, nginx's 75 s, cloud
 * balancers' 60 s and up), so svc drops a connection before the upstream does, rather than write the
 * next request onto one the upstream has already closed.
 */
export const UPSTREAM_KEEP_ALIVE_MS = 4_000;

/** Origins of the upstream URLs' `scheme://authority` parts (a few per server). */
const origins = new Map<string, string>();
const MAX_ORIGINS = 64;

/** A request target the WHATWG URL parser leaves as it is: no dot segment, no character it would escape. */
const PLAIN_TARGET = /^\/[A-Za-z0-9\-._~!$&()*+,;=:@/%?]*$/;
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?:[/?]|$)|\/\//i;

/**
 * The origin and request target (path and query) of an upstream URL, as
 * undici would take them from `new URL(url)`: parsed by URL only when the
 * target holds something the URL parser would change (dot segments,
 * characters it escapes); the origin of each `scheme://authority` is parsed
 * once. Each call to undici with a URL string parses it again otherwise.
 */
export function requestTarget(url: string): { origin: string; path: string } {
  const authority = url.indexOf('//');
  const slash = authority < 0 ? -1 : url.indexOf('/', authority + 2);
  const path = slash < 0 ? '' : url.slice(slash);
  if (slash > 0 && PLAIN_TARGET.test(path) && !DOT_SEGMENT.test(path)) {
    const prefix = url.slice(0, slash);
    let origin = origins.get(prefix);
    if (origin === undefined) {
      const parsed = new URL(prefix);
      origin = parsed.origin;
      if (prefix.includes('?') || prefix.includes('#') || parsed.origin === 'null') return slowTarget(url);
      if (origins.size >= MAX_ORIGINS) origins.clear();
      origins.set(prefix, origin);
    }
    return { origin, path };
  }
  return slowTarget(url);
}

function slowTarget(url: string): { origin: string; path: string } {
  const parsed = new URL(url);
  return {
    origin: parsed.origin,
    path: parsed.search ? `${parsed.pathname}${parsed.search}` : parsed.pathname,
  };
}

/** Errors that mean the connection closed under the request (no status line had arrived). */
const CLOSED_CODES = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

function replayable(body: UpstreamCall['body']): boolean {
  return body === undefined || body instanceof Uint8Array;
}

/**
 * An upstream client whose undici Agent is created on first use.
 *
 * A request that meets a closed connection before any byte of the answer is sent once more, on a new
 * connection, when the connection was a reused idle one and the body is in memory: the upstream closed
 * its end of an idle connection (its idle timeout, a balancer's, a NAT's after a long stall) while the
 * request was on its way, so it did not act on it. A fresh connection that closes is a real failure
 * (502), and so is a second close. Bodies streamed through unread are never sent again.
 */
export function createUpstreamClient(timeoutMs: number): UpstreamClient {
  // The agent's pool of each origin, as its factory made it (the agent's own default: a Pool).
  const pools = new Map<string, Pool>();
  let loading: Promise<{ undici: UndiciParts; agent: Agent }> | undefined;
  // the same, once loaded (a request then does not wait a tick for it)
  let loaded: { undici: UndiciParts; agent: Agent } | undefined;
  const load = () => {
    loading ??= undiciParts().then((undici) => {
      loaded = {
        undici,
        agent: new undici.Agent({
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          keepAliveTimeout: UPSTREAM_KEEP_ALIVE_MS,
          keepAliveMaxTimeout: 60_000,
          connect: { timeout: Math.min(timeoutMs, 30_000) },
          factory(origin, options) {
            const pool = new undici.Pool(origin, options);
            pools.set(String(origin), pool);
            return pool;
          },
        }),
      };
      return loaded;
    });
    return loading;
  };
  /**
   * True when the origin's pool holds an idle connection: the request will be written on it. (The
   * pool's own stats: the agent's sum up every origin's on each read.)
   */
  const idleConnection = (origin: string): boolean => (pools.get(origin)?.stats.free ?? 0) > 0;
  return {
    async call(call) {
      const { undici, agent } = loaded ?? (await load());
      const target = requestTarget(call.url);
      const send = () =>
        undici.request(agent, {
          origin: target.origin,
          path: target.path,
          method: call.method as 'POST',
          headers: call.headers,
          body: call.body ?? null,
          signal: call.signal,
        });
      let reused = idleConnection(target.origin);
      for (;;) {
        try {
          const { statusCode, headers, body } = await send();
          return { statusCode, headers, body };
        } catch (err) {
          if (call.signal.aborted || err instanceof undici.errors.RequestAbortedError) throw err;
          const code = (err as { code?: string })?.code;
          if (reused && code !== undefined && CLOSED_CODES.has(code) && replayable(call.body)) {
            reused = false;
            continue;
          }
          throw upstreamError(err, call.url);
        }
      }
    },
    async warm() {
      await load();
    },
    async close() {
      if (loading) await (await loading).agent.destroy();
    },
  };
}

function hasBody(req: IncomingMessage): boolean {
  return req.headers['content-length'] !== undefined
    ? req.headers['content-length'] !== '0'
    : req.headers['transfer-encoding'] !== undefined;
}

/**
 * How one proxied request calls its upstream (`ProxyExchange.callUpstream`):
 * the client's method and headers to `url`, cancelled with `signal`. Called
 * by `forward`, and again by the retrieval loop for its continuations.
 */
export function upstreamCaller(
  client: UpstreamClient,
  req: IncomingMessage,
  url: string,
  signal: CancelSignal,
): ProxyExchange['callUpstream'] {
  return function callUpstream(body, encoding) {
    return client.call({
      url,
      method: req.method ?? 'POST',
      headers: upstreamRequestHeaders(req.rawHeaders, encoding),
      body: body === req && !hasBody(req) ? undefined : body,
      signal,
    });
  };
}
