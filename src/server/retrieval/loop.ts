import { isUtf8 } from 'node:buffer';
import { once } from 'node:events';
import { PassThrough, Readable } from 'node:stream';
import zlib from 'node:zlib';
import { countRequestText } from '../../compression.js';
import { hasMarker, RETRIEVE_TOOL_NAME } from '../../engine/markers.js';
import { type SseEvent, type SseUsageReader, sseEvents } from '../../formats/index.js';
import { toolsJson } from '../../stats/prefix-shape.js';
import { answerRead } from '../accounting.js';
import type { ProxyExchange, ProxyStage, RetrievalState, UpstreamResponse } from '../proxy/pipeline.js';
import { keepBody } from '../proxy/splice-memo.js';
import { runOnce } from '../proxy/stages.js';
import { prematureClose } from '../stream-errors.js';
import {
  answerCalls,
  appendRetrievalTurn,
  contextCutIn,
  editBytes,
  MAX_RETRIEVAL_ROUNDS,
  offersRetrieval,
  retrievalToolEdit,
  toolsSpanAfterSplice,
} from './tool.js';

function header(up: UpstreamResponse, name: string): string | undefined {
  const v = up.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The upstream body decoded (gzip, deflate, br); headers then lose the encoding and length. */
function decoded(up: UpstreamResponse): { body: Readable; headers: UpstreamResponse['headers'] } {
  const encoding = header(up, 'content-encoding')?.toLowerCase();
  const { 'content-encoding': _e, 'content-length': _l, ...headers } = up.headers;
  const unzip =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? zlib.createGunzip()
      : encoding === 'deflate'
        ? zlib.createInflate()
        : encoding === 'br'
          ? zlib.createBrotliDecompress()
          : undefined;
  return { body: unzip ? up.body.pipe(unzip) : up.body, headers };
}

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as string));
  return Buffer.concat(chunks);
}

/**
 * Reads a body (with stream events: no async iterator); when it fails
 * midway, a body that gives what arrived and then the same error.
 */
function readOrReplayFailure(body: Readable): Promise<{ raw: Buffer } | { failed: Readable }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let settled = false;
    const failed = (err: Error) => {
      if (settled) return;
      settled = true;
      async function* replay() {
        yield* chunks;
        throw err;
      }
      resolve({ failed: Readable.from(replay()) });
    };
    if (body.readableEnded) return resolve({ raw: Buffer.alloc(0) });
    if (body.destroyed) return failed(body.errored ?? prematureClose());
    body.on('data', (c: Buffer | string) => {
      if (!settled) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c));
    });
    body.on('end', () => {
      if (settled) return;
      settled = true;
      resolve({ raw: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
    });
    body.on('error', failed);
    body.on('close', () => {
      if (!body.readableEnded) failed(prematureClose());
    });
  });
}

/** The text of a whole answer as received, decoded when it came compressed. */
async function answerText(upstream: UpstreamResponse, raw: Buffer): Promise<string> {
  if (header(upstream, 'content-encoding') === undefined) return raw.toString('utf8');
  const { body } = decoded({ ...upstream, body: Readable.from([raw]) });
  return (await readAll(body)).toString('utf8');
}

/**
 * Tokens the inserted svc_retrieve definition adds to the forwarded tool list:
 * the tools as forwarded less the tools as sent, each counted whole as the
 * proxy counts them (`toolTokens` in proxy/stages.ts).
 */
async function insertedToolTokens(ex: ProxyExchange, insert: string): Promise<number> {
  const model = ex.parsed?.model ?? 'unknown';
  const sent = Array.isArray(ex.parsed?.body.tools) ? (ex.parsed.body.tools as unknown[]) : undefined;
  if (!sent) return toolTokensAdded(model, [], insert);
  // a conversation's tool list comes again as the same array (the body parser's) while its text is the same
  let known = insertedTokens.get(sent);
  if (!known) {
    known = new Map();
    insertedTokens.set(sent, known);
  }
  const key = `${model}\n${insert}`;
  let added = known.get(key);
  if (added === undefined) {
    added = await toolTokensAdded(model, sent, insert);
    if (known.size >= 8) known.clear();
    known.set(key, added);
  }
  return added;
}

/** `insertedToolTokens` by the tool list sent, per model and inserted text. */
const insertedTokens = new WeakMap<unknown[], Map<string, number>>();

async function toolTokensAdded(model: string, sent: unknown[], insert: string): Promise<number> {
  let tool: unknown;
  try {
    tool = JSON.parse(insert.slice(insert.indexOf('{'), insert.lastIndexOf('}') + 1));
  } catch {
    return countRequestText(model, insert);
  }
  if (sent.length === 0) return countRequestText(model, JSON.stringify([tool]));
  // JSON.stringify([...sent, tool]), from the text of `sent` the other counts share
  const json = toolsJson(sent);
  const before = await countRequestText(model, json);
  return (await countRequestText(model, `${json.slice(0, -1)},${JSON.stringify(tool)}]`)) - before;
}

/**
 * What the stage did for a spliced body the splice memo holds
 * (src/server/proxy/splice-memo.ts): that body comes again only for the same
 * request text and engine output, so the tool is offered the same way (the
 * same bytes, the same tokens added) as long as the rest of what decides it
 * is the same. `body` undefined: not offered.
 */
interface OfferedTool {
  contextCut: boolean;
  stored: boolean;
  body: Buffer | undefined;
  /** The tool definition inserted (its tokens are counted with the request's, after forwarding). */
  insert: string | undefined;
}

/**
 * Counts the inserted tool definition into the request as forwarded
 * (docs/stats.md), after the rest of its counts, once it has been forwarded.
 */
function countInserted(ex: ProxyExchange, insert: string): void {
  const counted = ex.countTokens;
  ex.countTokens = runOnce(async () => {
    await counted?.();
    if (ex.event.tokensBefore <= 0) return;
    const added = await insertedToolTokens(ex, insert);
    ex.event.tokensAfter += added;
    ex.event.tokensAdded = added;
  });
  if (!counted) ex.onFinish.unshift(() => ex.countTokens?.());
}

const offeredTo = new WeakMap<Buffer, OfferedTool>();

/** The loop's state for a body with the tool: its text decoded from the bytes if a round needs it. */
function retrievalState(body: Buffer, format: RetrievalState['format']): RetrievalState {
  let text: string | undefined;
  return {
    format,
    get text() {
      text ??= body.toString('utf8');
      return text;
    },
  };
}

/**
 * Offers the retrieval tool (see `offersRetrieval`): a request with tools gets
 * `svc_retrieve` appended to them on every request, the same way every time,
 * so a conversation's tools stay byte-identical from its first request to its
 * last; the loop then answers the model's calls of it.
 */
export const retrievalToolStage: ProxyStage = {
  name: 'retrieval-tool',
  run(ex, next) {
    const format = ex.format;
    if (!format || ex.skipCompression || !ex.json) return next();
    const spliced =
      ex.outEncoding === undefined && Buffer.isBuffer(ex.outBody) && ex.outBody !== ex.body?.raw;
    const known = ex.spliced;
    if (!spliced && ex.text === undefined) return next();
    // the text of what goes upstream, decoded only when the tool is offered (or markers are looked for)
    let decoded: string | undefined;
    const textOf = (): string => {
      decoded ??= spliced
        ? known?.body === ex.outBody
          ? known.text
          : (ex.outBody as Buffer).toString('utf8')
        : ex.text!;
      return decoded;
    };
    // A spliced body with CCR entries holds their markers; otherwise look (a client may send markers itself).
    const marked = () =>
      (spliced && known?.body === ex.outBody && (ex.output?.ccrEntries.size ?? 0) > 0) || hasMarker(textOf());
    const contextCut =
      spliced && contextCutIn(ex.output?.contextTransforms ?? ex.output?.result.transforms_applied);
    // The body the splice memo gave again (a memoized turn): the tool goes where it went then.
    const memoKey = spliced && known?.body === ex.outBody ? known.body : undefined;
    const stored = (ex.output?.ccrEntries.size ?? 0) > 0;
    const offered = memoKey ? offeredTo.get(memoKey) : undefined;
    if (offered && offered.contextCut === contextCut && offered.stored === stored) {
      if (!offered.body) return next();
      ex.outBody = offered.body;
      ex.outEncoding = undefined;
      ex.retrieval = retrievalState(offered.body, format);
      if (offered.insert !== undefined) countInserted(ex, offered.insert);
      return next();
    }
    if (!offersRetrieval(ex.json, contextCut, marked)) {
      if (memoKey) offeredTo.set(memoKey, { contextCut, stored, body: undefined, insert: undefined });
      return next();
    }
    const text = textOf();
    // another stage (or the client) may have offered it already
    const edit = text.includes(`"name":"${RETRIEVE_TOOL_NAME}"`)
      ? undefined
      : retrievalToolEdit(
          text,
          ex.json,
          format,
          ex.text === undefined
            ? undefined
            : toolsSpanAfterSplice(ex.text, ex.json, ex.hints, text, String(format.messagesPath[0])),
        );
    const withTool = edit ? text.slice(0, edit.start) + edit.insert + text.slice(edit.end) : text;
    // The bytes of `text` when they are at hand: the spliced body, or the decoded original (valid UTF-8).
    const bytes =
      spliced && known?.body === ex.outBody
        ? known.body
        : !spliced && ex.body?.decoded && isUtf8(ex.body.decoded)
          ? ex.body.decoded
          : undefined;
    ex.outBody = bytes ? (edit ? editBytes(text, bytes, edit) : bytes) : Buffer.from(withTool, 'utf8');
    ex.outEncoding = undefined;
    ex.retrieval = { text: withTool, format };
    if (edit) countInserted(ex, edit.insert);
    if (memoKey)
      offeredTo.set(memoKey, { contextCut, stored, body: keepBody(ex.outBody), insert: edit?.insert });
    return next();
  },
};

async function jsonLoop(
  ex: ProxyExchange,
  state: RetrievalState,
  first: UpstreamResponse,
): Promise<UpstreamResponse> {
  let upstream = first;
  // read when a round continues (a large body's text is decoded only then)
  let text: string | undefined;
  for (let round = 0; ; round += 1) {
    const read = await readOrReplayFailure(upstream.body);
    if ('failed' in read) return { ...upstream, body: read.failed };
    const raw = read.raw;
    const replay: UpstreamResponse = { ...upstream, body: Readable.from([raw]) };
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(await answerText(upstream, raw)) as Record<string, unknown>;
    } catch {
      return replay;
    }
    // Every answer's usage counts (the first and each continuation's): src/server/accounting.ts.
    const usage = state.format.usageFromJson(json);
    answerRead(ex, round, usage);
    // the answer relayed as it came: its usage is read already
    replay.usage = usage;
    const { calls, assistant } = state.format.ownToolCalls(json, RETRIEVE_TOOL_NAME);
    if (calls.length === 0) return replay;
    if (round >= MAX_RETRIEVAL_ROUNDS) {
      const body = Buffer.from(JSON.stringify(state.format.withoutOwnToolCalls(json, RETRIEVE_TOOL_NAME)));
      const { headers } = decoded({ ...upstream, body: Readable.from([]) });
      return {
        statusCode: upstream.statusCode,
        headers: { ...headers, 'content-length': String(body.length) },
        body: Readable.from([body]),
      };
    }
    const answers = await answerCalls(ex.ctx, calls);
    text = appendRetrievalTurn(text ?? state.text, state.format, assistant, answers);
    upstream = await ex.callUpstream(Buffer.from(text, 'utf8'));
    if (upstream.statusCode !== 200) return upstream;
  }
}

/** The events of one streamed round, read for usage on the way (each round's usage counts). */
async function* tapped(events: AsyncIterable<SseEvent>, reader: SseUsageReader): AsyncGenerator<SseEvent> {
  for await (const ev of events) {
    reader.onEvent(ev.event, ev.data);
    yield ev;
  }
}

function streamLoop(ex: ProxyExchange, state: RetrievalState, first: UpstreamResponse): UpstreamResponse {
  const out = new PassThrough();
  const relay = state.format.createStreamRelay(RETRIEVE_TOOL_NAME);
  const write = async (chunk: string) => {
    if (!out.write(chunk)) await Promise.race([once(out, 'drain'), once(out, 'close')]);
  };
  const { headers, body } = decoded(first);
  const drive = async () => {
    let text: string | undefined;
    let events = sseEvents(body);
    for (let round = 0; ; round += 1) {
      const last = round >= MAX_RETRIEVAL_ROUNDS;
      const reader = state.format.createSseUsageReader();
      const result = await relay.round(tapped(events, reader), last, write);
      answerRead(ex, round, reader.usage());
      if (result.calls.length === 0 || last) break;
      const answers = await answerCalls(ex.ctx, result.calls);
      text = appendRetrievalTurn(text ?? state.text, state.format, result.assistant, answers);
      const next = await ex.callUpstream(Buffer.from(text, 'utf8'));
      if (next.statusCode !== 200) {
        const error = (await readAll(decoded(next).body)).toString('utf8');
        ex.ctx.logger.warn('upstream refused the retrieval continuation', { status: next.statusCode });
        await write(`event: error\ndata: ${error.trim() || '{}'}\n\n`);
        break;
      }
      events = sseEvents(decoded(next).body);
    }
    out.end();
  };
  drive().catch((err) => out.destroy(err as Error));
  return { statusCode: first.statusCode, headers, body: out };
}

/**
 * Answers the model's calls of the retrieval tool inside the proxy: reads
 * the response (JSON, or SSE as it streams), answers retrieval calls from
 * the CCR store, continues the conversation upstream (at most
 * MAX_RETRIEVAL_ROUNDS rounds) and relays one answer: the client never sees
 * a retrieval call.
 */
export const retrievalLoopStage: ProxyStage = {
  name: 'retrieval-loop',
  run(ex, next) {
    const state = ex.retrieval;
    const upstream = ex.upstream;
    if (!state || !upstream || upstream.statusCode !== 200) return next();
    const type = header(upstream, 'content-type') ?? '';
    if (type.includes('text/event-stream')) ex.upstream = streamLoop(ex, state, upstream);
    else if (type.includes('json'))
      return jsonLoop(ex, state, upstream).then((answered) => {
        ex.upstream = answered;
        return next();
      });
    return next();
  },
};
