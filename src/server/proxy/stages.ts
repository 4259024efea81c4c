import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { compressAndStore, countRequestMessages, countRequestText } from '../../compression.js';
import { isSvcError } from '../../errors.js';
import { messagesList, parseRequest } from '../../formats/index.js';
import type { ParsedRequest } from '../../formats/types.js';
import { requestPaths } from '../../quiet.js';
import { toolsJson } from '../../stats/prefix-shape.js';
import { compressionOf } from '../context.js';
import { elapsedMs } from '../finished-event.js';
import { CACHE_HEADER } from '../guards/responses.js';
import { compressInWorker, readInWorker } from '../large-body/stages.js';
import { readBody } from '../read-body.js';
import { isBypass } from '../routes/compress.js';
import { prematureClose } from '../stream-errors.js';
import type { ProxyExchange, ProxyStage } from './pipeline.js';
import { writeBody } from './splice-memo.js';
import { clientResponseHeaders, upstreamError } from './upstream.js';
import { createUsageTap } from './usage-tap.js';

/**
 * Reads the body (limit: 413) and, for a provider format, its JSON and the
 * engine's view of it. A body svc cannot read (unknown encoding, not JSON,
 * not the format) is forwarded untouched: the provider's own error is the
 * one the client should see. Other `/v1` paths stream through unread.
 */
export const parseStage: ProxyStage = {
  name: 'parse',
  async run(ex, next) {
    if (!ex.format) {
      ex.skipCompression = true;
      ex.outBody = ex.req;
      return next();
    }
    const large = ex.ctx.largeBodies;
    const bodies = ex.ctx.bodies;
    const body = await readBody(ex.req, ex.ctx.config.maxBodyBytes, large?.threshold, (chunks, size) =>
      bodies.knownBytes(chunks, size),
    );
    ex.body = body;
    ex.outBody = body.raw;
    ex.outEncoding = body.encoding;
    if (isBypass(ex.req)) {
      ex.skipCompression = true;
      ex.event.mode = 'bypass';
    }
    if (!body.decoded) {
      ex.skipCompression = true;
      ex.event.mode = 'passthrough';
      return next();
    }
    // A large body is read in a worker thread (src/server/large-body): the event loop stays free.
    if (!(large?.takes(body.decoded) && (await readInWorker(ex, large, body.decoded))))
      readJson(ex, body.decoded, plainParse(ex, body.decoded));
    return next();
  },
};

/** Bodies below this size that will not be compressed are parsed by `JSON.parse` alone. */
const PLAIN_PARSE_BYTES = 64 * 1024;

/**
 * True when a body's parse only feeds the event and the guards (model,
 * stream, token count, cache key): it will not be compressed, here or for
 * `--observe`'s projection, and it is small. Then the body parser's reuse of
 * earlier bodies (spans for the splicer, strings the memos have hashed) buys
 * nothing, and keeping the body for a later turn would cost memory.
 */
function plainParse(ex: ProxyExchange, decoded: Buffer): boolean {
  return ex.skipCompression && !ex.ctx.config.observe && decoded.length < PLAIN_PARSE_BYTES;
}

/**
 * Parses a decoded body into `ex` (text, JSON, the engine's view of it); a
 * body that is not JSON or not the format leaves compression off. `plain`:
 * by `JSON.parse` alone (see `plainParse`). The same code runs in the
 * large-body worker.
 */
export function readJson(ex: ProxyExchange, decoded: Buffer, plain = false): void {
  if (!ex.format) return;
  try {
    let json: unknown;
    if (plain) {
      ex.text = decoded.toString('utf8');
      json = JSON.parse(ex.text);
    } else {
      const read = ex.ctx.bodies.parseBytes(decoded);
      ex.text = read.text;
      json = read.value;
      ex.hints = read.hints;
    }
    if (typeof json === 'object' && json !== null && !Array.isArray(json)) {
      ex.json = json as Record<string, unknown>;
      ex.event.model = typeof ex.json.model === 'string' ? ex.json.model : undefined;
      ex.event.stream = ex.json.stream === true;
    }
    if (!ex.skipCompression) ex.parsed = parseRequest(ex.format, json);
  } catch (err) {
    ex.ctx.logger.debug('request body not readable as the format; forwarding it untouched', {
      path: ex.path,
      reason: isSvcError(err) ? err.message : 'not JSON',
    });
    ex.skipCompression = true;
    ex.event.mode = 'passthrough';
  }
}

function failOpen(ex: ProxyExchange, err: unknown, what: string): void {
  ex.event.compressionFailed = true;
  ex.output = undefined;
  ex.ctx.logger.error(`${what}; forwarding the original request`, {
    path: ex.path,
    error: err instanceof Error ? err.message : String(err),
  });
}

/**
 * Runs the engine and stores its CCR entries; on any failure forwards the
 * original (principle 1, 3). (Stages with nothing to do return `next()`
 * as it is: an async function around it costs a promise and two ticks more.)
 */
export const compressStage: ProxyStage = {
  name: 'compress',
  run(ex, next) {
    // read in the worker: it compresses, splices and offers the retrieval tool there too
    if (ex.large) return compressInWorker(ex).then(next);
    if (ex.skipCompression || !ex.parsed || ex.parsed.messages.length === 0) return next();
    return compress(ex, ex.parsed).then(next);
  },
};

async function compress(ex: ProxyExchange, parsed: ParsedRequest): Promise<void> {
  try {
    ex.output = await compressAndStore(
      compressionOf(ex.ctx),
      parsed.messages,
      parsed.model ?? 'unknown',
      parsed.maxTokens,
      ex.event.keyHash,
    );
  } catch (err) {
    failOpen(ex, err, 'compression failed');
    countOriginal(ex, parsed);
  }
}

/**
 * The tokens of a request forwarded as it came because its compression
 * failed: its messages and tool definitions, counted once it has been
 * forwarded, as compressed ones are. Tokens in, none saved; known, so never
 * reported as 0 (principle 5).
 */
function countOriginal(ex: ProxyExchange, parsed: ParsedRequest): void {
  ex.countTokens = runOnce(async () => {
    try {
      const model = parsed.model ?? 'unknown';
      const [messages, tools] = await Promise.all([
        countRequestMessages(model, parsed.messages),
        toolTokens(parsed),
      ]);
      ex.event.tokensBefore = messages + tools;
      ex.event.tokensAfter = messages + tools;
    } catch (err) {
      ex.ctx.logger.error('token counts for the stats failed', { path: ex.path, error: String(err) });
    }
  });
  ex.onFinish.unshift(() => ex.countTokens?.());
}

/**
 * Tokens of the request's tool definitions (top-level `tools`, the field every
 * supported API uses), counted as their JSON text: the provider bills them as
 * input on every turn.
 */
async function toolTokens(parsed: ParsedRequest): Promise<number> {
  const tools = parsed.body.tools;
  if (!Array.isArray(tools) || tools.length === 0) return 0;
  return countRequestText(parsed.model ?? 'unknown', toolsJson(tools));
}

/** Writes the engine's output into the original body; untouched bytes stay; nothing changed: the original bytes go. */
export const spliceStage: ProxyStage = {
  name: 'splice',
  run(ex, next) {
    const { output, parsed, format, text } = ex;
    if (output && parsed && format && text !== undefined) {
      try {
        const spliced = writeBody(format, text, parsed, output, ex.hints, messagesList(format, ex.json));
        if (spliced !== undefined) {
          ex.outBody = spliced.body;
          ex.spliced = spliced;
          ex.outEncoding = undefined;
        }
        // The whole request: the messages (system prompt included) and the tool definitions,
        // which svc forwards unchanged (docs/stats.md). Counted once the request is forwarded.
        const r = output.result;
        ex.countTokens = runOnce(async () => {
          try {
            // counted a message at a time, letting requests that arrive meanwhile go first
            await output.countAhead?.(requestPaths.pauses());
            const tools = await toolTokens(parsed);
            ex.event.tokensBefore = r.tokens_before + tools;
            if (spliced !== undefined) {
              ex.event.tokensAfter = r.tokens_after + tools;
              ex.event.tokensSaved = r.tokens_saved;
              ex.event.transforms = r.transforms_applied;
            } else ex.event.tokensAfter = r.tokens_before + tools;
          } catch (err) {
            ex.event.tokensBefore = 0;
            ex.ctx.logger.error('token counts for the stats failed', { path: ex.path, error: String(err) });
          }
        });
        ex.onFinish.unshift(() => ex.countTokens?.());
      } catch (err) {
        ex.event.tokensBefore = 0;
        failOpen(ex, err, 'compressed request could not be spliced');
        countOriginal(ex, parsed);
      }
    }
    return next();
  },
};

/** `f`, run at most once: later calls share the first call's promise. */
export function runOnce(f: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => {
    running ??= f();
    return running;
  };
}

/**
 * How long after the upstream call starts the `afterForward` hooks run: a
 * model takes longer than that to answer, so they run while it is awaited;
 * an answer that comes sooner (an error, a loopback mock) is relayed first.
 */
const AFTER_FORWARD_MS = 20;

/** Runs `ex`'s `afterForward` hooks; one that throws is logged, never thrown from a timer. */
function runAfterForward(ex: ProxyExchange): void {
  for (const hook of ex.afterForward) {
    try {
      hook();
    } catch (err) {
      ex.ctx.logger.error('a hook after forwarding failed', { path: ex.path, error: String(err) });
    }
  }
}

/** Calls the upstream with `ex.outBody`, then (not waiting for them) the `afterForward` hooks. */
export const forwardStage: ProxyStage = {
  name: 'forward',
  async run(ex, next) {
    ex.event.overheadMs = elapsedMs(ex.pending);
    const answer = ex.callUpstream(ex.outBody, ex.outEncoding);
    if (ex.afterForward.length > 0) setTimeout(runAfterForward, AFTER_FORWARD_MS, ex).unref();
    ex.upstream = await answer;
    ex.event.upstreamStatus = ex.upstream.statusCode;
    return next();
  },
};

/**
 * Sends `body`'s chunks to the client as they arrive, each given to `seen`
 * first, pausing while the client's socket is full (stream events: an async
 * iterator costs several microseconds more per request). Resolves when the
 * body ended, or when the client went away (the rest is dropped, the body
 * destroyed); rejects with the body's error, or when it closed before its end.
 */
function relayBody(body: Readable, res: ServerResponse, seen: (chunk: Buffer) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    if (body.readableEnded) return resolve();
    if (body.destroyed) return reject(body.errored ?? prematureClose());
    // Settled once; the listeners stay (removing each costs more than the events that come after:
    // the body's close, which they ignore, and an error, which they keep from going unhandled).
    let settled = false;
    const settle = (err?: Error) => {
      if (settled) return;
      settled = true;
      if (err) reject(err);
      else resolve();
    };
    const gone = () => {
      settle();
      body.destroy();
    };
    body.on('error', (err: Error) => settle(err));
    body.on('end', () => settle());
    body.on('close', () => {
      if (!body.readableEnded) settle(prematureClose());
    });
    res.on('drain', () => {
      if (!settled) body.resume();
    });
    // gone while waiting for the socket to drain: nothing more is read
    res.on('close', () => {
      if (!settled && body.isPaused()) gone();
    });
    body.on('data', (chunk: Buffer) => {
      if (settled) return;
      seen(chunk);
      if (!res.write(chunk)) body.pause();
      if (res.destroyed) gone();
    });
  });
}

/**
 * Relays the upstream response as it arrives: status, headers (minus
 * hop-by-hop), body chunk by chunk with back-pressure; reads usage on the side.
 */
export const relayStage: ProxyStage = {
  name: 'relay',
  async run(ex) {
    const upstream = ex.upstream;
    if (!upstream) return;
    const { res } = ex;
    const header = (name: string) => {
      const v = upstream.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    const known = upstream.usage;
    const tap =
      ex.format && known === undefined
        ? createUsageTap(ex.format, header('content-type'), header('content-encoding'))
        : undefined;
    // every header at once: a header set before (`setHeader`) makes node set each of these again
    const headers = clientResponseHeaders(upstream.headers);
    const outcome = ex.cacheOutcome;
    if (outcome !== undefined && upstream.headers[CACHE_HEADER] === undefined)
      headers.unshift(CACHE_HEADER, outcome);
    res.writeHead(upstream.statusCode, headers);
    // A stream's headers go out now: SDKs resolve a stream call on them, before the first event.
    if ((header('content-type') ?? '').includes('text/event-stream')) res.flushHeaders();
    ex.event.status = upstream.statusCode;
    const taps = ex.responseTaps;
    try {
      await relayBody(upstream.body as Readable, res, (chunk) => {
        tap?.write(chunk);
        for (const t of taps) t(chunk);
      });
    } catch (err) {
      // Reset or stalled mid-body: the status is sent, so the client connection is cut (handleProxy).
      throw ex.signal.aborted ? err : upstreamError(err, ex.upstreamBase);
    }
    res.end();
    if (known !== undefined) ex.event.usage = known;
    else if (tap) {
      const usage = tap.end();
      ex.event.usage = usage instanceof Promise ? await usage : usage;
    }
  },
};
