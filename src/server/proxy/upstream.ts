import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Agent } from 'undici';
import { SvcError } from '../../errors.js';
import type { ProxyExchange, UpstreamClient } from '../context.js';

export type { UpstreamCall, UpstreamClient } from '../context.js';

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
]);

function connectionTokens(value: string | string[] | undefined): Set<string> {
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
  let named: Set<string> | undefined;
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
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
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

/** An upstream client whose undici Agent is created on first use. */
export function createUpstreamClient(timeoutMs: number): UpstreamClient {
  let loading: Promise<{ undici: typeof import('undici'); agent: Agent }> | undefined;
  const load = () => {
    loading ??= import('undici').then((undici) => ({
      undici,
      agent: new undici.Agent({
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        keepAliveTimeout: 30_000,
        connect: { timeout: Math.min(timeoutMs, 30_000) },
      }),
    }));
    return loading;
  };
  return {
    async call(call) {
      const { undici, agent } = await load();
      try {
        const { statusCode, headers, body } = await undici.request(call.url, {
          method: call.method as 'POST',
          headers: call.headers,
          body: call.body ?? null,
          signal: call.signal,
          dispatcher: agent,
        });
        return { statusCode, headers, body };
      } catch (err) {
        if (call.signal.aborted || err instanceof undici.errors.RequestAbortedError) throw err;
        throw upstreamError(err, call.url);
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
  signal: AbortSignal,
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
