import type { CcrStore } from '../../ccr/store.js';
import { type Compression, compressAndStore, createEngineMemo, lazyEngine } from '../../compression.js';
import type { Config } from '../../config/options.js';
import type { ToinAdvice } from '../../engine/context/types.js';
import { limitEngineMemos, memoShares } from '../../engine/memo-budget.js';
import { setTokenMemoLimit } from '../../engine/tokens.js';
import type { ChatMessage, CompressionResult, EngineOutput } from '../../engine/types.js';
import type { SvcEventBus } from '../../events.js';
import { FORMATS } from '../../formats/index.js';
import { responseCacheKey } from '../../guards/cache-key.js';
import { maxOutputTokens } from '../../guards/cost-estimate.js';
import { ANONYMOUS_KEY } from '../../guards/rate-limiter.js';
import { PROXY_KEEPS, PrefixParser } from '../../json/prefix-parse.js';
import type { Logger } from '../../log.js';
import { requestShape } from '../../stats/prefix-shape.js';
import type { ToinStore } from '../../toin/store.js';
import type { ProxyExchange, ServerContext } from '../context.js';
import { startEvent } from '../finished-event.js';
import { countInputTokens } from '../guards/stages.js';
import { isKeptBody } from '../proxy/splice-memo.js';
import { compressStage, readJson, spliceStage } from '../proxy/stages.js';
import { retrievalToolStage } from '../retrieval/loop.js';
import { bypassResult, compressResponse, parseJsonBody } from '../routes/compress.js';
import { parseCompressRequest } from '../routes/compress-request.js';
import { keeps } from './facts.js';
import type {
  ApiCompressed,
  ApiFacts,
  ApiReadRequest,
  BodyFacts,
  Compressed,
  ReadRequest,
  WorkerLog,
} from './types.js';

/**
 * The large-body worker's work, with the very code of the in-process path:
 * `readJson` (parse stage), the guards' token count and cache key, then the
 * `compress`, `splice` and `retrieval-tool` stages on an exchange of the
 * worker's own. The output is the in-process path's (principle 2); what
 * differs is only where it runs, and that the worker has its own memo and
 * body parser (reused by the next turns of a conversation while it lives).
 */

/** A CCR store that keeps what is put, for the main thread to store (its store is the real one). */
function collectingStore(): CcrStore & { entries: Map<string, string> } {
  const entries = new Map<string, string>();
  return {
    entries,
    async put(hash, original) {
      entries.set(hash, original);
    },
    async putMany(more) {
      for (const [h, o] of more) entries.set(h, o);
    },
    async get(hash) {
      return entries.get(hash);
    },
  };
}

/**
 * The bytes of `buf` in an ArrayBuffer of their own, to hand over
 * (transfer): the buffer itself when it is and no memo holds it (a memoized
 * turn gets the same body again), else one copy.
 */
function own(buf: Buffer): ArrayBuffer {
  return buf.byteOffset === 0 &&
    buf.byteLength === buf.buffer.byteLength &&
    buf.buffer instanceof ArrayBuffer &&
    !isKeptBody(buf)
    ? buf.buffer
    : (buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer);
}

/** A `/v1/compress` body the worker read. */
interface ApiHeld {
  messages: ChatMessage[];
  model: string;
  tokens: number | undefined;
  owner: string | undefined;
}

/** One body the worker read, kept until it is compressed or released. */
interface Held {
  ex: ProxyExchange;
  ccr: ReturnType<typeof collectingStore>;
  observations: NonNullable<EngineOutput['observations']>;
  toin: ToinAdvice | undefined;
}

/** The worker's state: its context (config, memo, parser) and the bodies it holds. */
export class LargeBodyWork {
  private readonly held = new Map<number, Held>();
  private readonly api = new Map<number, ApiHeld>();
  // bounded by --memo-max-bytes as the main thread's are (src/engine/memo-budget.ts)
  private readonly memo: ReturnType<typeof createEngineMemo>;
  private readonly bodies: PrefixParser;
  /** Log lines of the job being run, sent back with its reply. */
  logs: WorkerLog[] = [];

  constructor(private readonly config: Config) {
    const shares = memoShares(config.memoMaxBytes);
    this.memo = createEngineMemo(shares.engineResults);
    this.bodies = new PrefixParser(shares.bodyParses, PROXY_KEEPS);
    setTokenMemoLimit(shares.tokenCountChars);
    limitEngineMemos(shares);
  }

  private logger(): Logger {
    const line =
      (level: WorkerLog['level']) =>
      (message: string, fields?: Record<string, unknown>): void => {
        this.logs.push({ level, message, fields });
      };
    return { error: line('error'), warn: line('warn'), info: line('info'), debug: line('debug') };
  }

  /** The exchange a stage sees in the worker (the fields the body stages read and write). */
  private exchange(request: ReadRequest, held: Omit<Held, 'ex'>): ProxyExchange {
    const bus = {
      emit: (name: string, event: { observations: Held['observations'] }) => {
        if (name === 'toin.observed') held.observations.push(...event.observations);
        return true;
      },
    } as unknown as SvcEventBus;
    const toin = { advice: () => held.toin } as unknown as ToinStore;
    const ctx = {
      config: this.config,
      bus,
      ccr: held.ccr,
      logger: this.logger(),
      now: Date.now,
      compress: lazyEngine.compress,
      engineMemo: this.memo,
      bodies: this.bodies,
      get toin() {
        return held.toin ? toin : undefined;
      },
    } as unknown as ServerContext;
    const bytes = Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength);
    const pending = startEvent(ctx, request.path, request.format);
    pending.event.keyHash = request.keyHash;
    return {
      ctx,
      req: { headers: request.headers } as ProxyExchange['req'],
      path: request.path,
      search: request.search,
      format: FORMATS[request.format],
      skipCompression: request.skipCompression,
      body: { raw: bytes, encoding: undefined, decoded: bytes },
      outBody: bytes,
      outEncoding: undefined,
      pending,
      event: pending.event,
      responseTaps: [],
      afterForward: [],
      onFinish: [],
    } as unknown as ProxyExchange;
  }

  /** Parses a body and finds the facts the main thread needs; keeps it when it will be compressed. */
  read(request: ReadRequest): BodyFacts {
    const parts = { ccr: collectingStore(), observations: [], toin: undefined };
    const ex = this.exchange(request, parts);
    readJson(ex, ex.body!.decoded!);
    const json = ex.json;
    const facts: BodyFacts = {
      object: json !== undefined,
      model: ex.event.model,
      stream: ex.event.stream,
      maxOutputTokens: json ? maxOutputTokens(json) : 0,
      inputTokens: request.needs.tokens ? countInputTokens(ex) : 0,
      cacheKey:
        request.needs.cacheKey && json
          ? responseCacheKey({
              path: request.path + request.search,
              body: json,
              keyHash: request.keyHash ?? ANONYMOUS_KEY,
              headers: request.headers,
            })
          : undefined,
      messages: ex.parsed?.messages.length ?? 0,
      skipCompression: ex.skipCompression,
      mode: ex.event.mode,
    };
    if (keeps(facts)) this.held.set(request.id, { ex, ...parts });
    return facts;
  }

  /** Compresses a body `read` kept: the compress, splice and retrieval-tool stages, as in process. */
  async compress(
    id: number,
    toin: ToinAdvice | undefined,
  ): Promise<{ compressed: Compressed; transfer: ArrayBuffer[] }> {
    const held = this.held.get(id);
    if (!held) throw new Error(`no body held for job ${id}`);
    this.held.delete(id);
    held.toin = toin;
    const { ex } = held;
    const original = ex.outBody;
    const done = async () => undefined;
    await compressStage.run(ex, () => spliceStage.run(ex, () => retrievalToolStage.run(ex, done)));
    // the stats' token counts, which in process wait for the response: here, off the main thread
    await ex.countTokens?.();
    // the shape of the request as sent, for the cache-aware estimate (the messages' counts are memoized by now)
    const parsed = ex.parsed;
    const shape =
      parsed && parsed.messages.length > 0
        ? requestShape((await lazyEngine.load()).tokenizerFor, parsed)
        : undefined;
    const e = ex.event;
    const event: Compressed['event'] = {
      tokensBefore: e.tokensBefore,
      tokensAfter: e.tokensAfter,
      tokensSaved: e.tokensSaved,
      transforms: e.transforms,
      compressionFailed: e.compressionFailed,
    };
    if (e.tokensAdded !== undefined) event.tokensAdded = e.tokensAdded;
    let body: ArrayBuffer | undefined;
    if (ex.outBody !== original && Buffer.isBuffer(ex.outBody)) {
      body = own(ex.outBody);
    }
    const compressed: Compressed = {
      event,
      body,
      retrieval: ex.retrieval !== undefined,
      entries: [...held.ccr.entries],
      observations: held.observations,
      shape,
    };
    return { compressed, transfer: body ? [body] : [] };
  }

  release(id: number): void {
    this.held.delete(id);
    this.api.delete(id);
  }

  /** `POST /v1/compress`: parses and checks the body (throws its SvcError), counts its tokens when asked. */
  async apiRead(request: ApiReadRequest): Promise<ApiFacts> {
    const { messages, model } = parseCompressRequest(
      parseJsonBody(Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength)),
    );
    const tokens = request.countTokens
      ? (await lazyEngine.load()).tokenizerFor(model).countMessages(messages)
      : 0;
    this.api.set(request.id, {
      messages,
      model,
      tokens: request.countTokens ? tokens : undefined,
      owner: request.keyHash,
    });
    return { model, tokens };
  }

  /** `POST /v1/compress`: compresses (or, bypassed, counts) and writes the response body as the route does. */
  async apiCompress(
    id: number,
    bypass: boolean,
    toin: ToinAdvice | undefined,
  ): Promise<{ compressed: ApiCompressed; transfer: ArrayBuffer[] }> {
    const job = this.api.get(id);
    if (!job) throw new Error(`no body held for job ${id}`);
    this.api.delete(id);
    const ccr = collectingStore();
    const observations: Held['observations'] = [];
    let result: CompressionResult;
    if (bypass) {
      const tokens =
        job.tokens ?? (await lazyEngine.load()).tokenizerFor(job.model).countMessages(job.messages);
      result = bypassResult(job.messages, tokens);
    } else {
      const compression: Compression = {
        config: this.config,
        compress: lazyEngine.compress,
        ccr,
        memo: this.memo,
        toin: toin ? () => toin : undefined,
        observed: (o) => observations.push(...o),
      };
      result = (await compressAndStore(compression, job.messages, job.model, undefined, job.owner)).result;
    }
    const body = Buffer.from(JSON.stringify(compressResponse(result)), 'utf8');
    const buffer = own(body);
    return {
      compressed: {
        event: {
          tokensBefore: result.tokens_before,
          tokensAfter: result.tokens_after,
          tokensSaved: result.tokens_saved,
          transforms: result.transforms_applied,
        },
        body: buffer,
        entries: [...ccr.entries],
        observations,
      },
      transfer: [buffer],
    };
  }
}
