import type { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { Polka } from 'polka';
import type { CcrStore } from '../ccr/store.js';
import type { CompressFn, Compression } from '../compression.js';
import type { Config } from '../config/options.js';
import type { ContentMemo, EngineOutput } from '../engine/types.js';
import type { ReportedUsage, RequestFinishedEvent, SvcEventBus } from '../events.js';
import type { ParsedRequest, ProviderFormat } from '../formats/index.js';
import type { Guards } from '../guards/index.js';
import type { PrefixParser } from '../json/prefix-parse.js';
import type { SpanHints } from '../json/spans.js';
import type { Logger } from '../log.js';
import type { FleetStats } from '../stats/fleet-stats.js';
import type { LiveStats } from '../stats/live-stats.js';
import type { CacheCounts } from '../stats/metrics.js';
import type { PricingTable } from '../stats/pricing.js';
import type { SavingsStore } from '../stats/redis-savings.js';
import type { BudgetStatus } from '../stats/stats-record.js';
import type { SharedStore } from '../store/redis.js';
import type { ToinStore } from '../toin/store.js';
import type { LargeBodies, LargeBodyJob } from './large-body/types.js';
import type { RequestBody } from './read-body.js';

/**
 * The server's shared state (`ServerContext`) and the typed data of one
 * proxied request (`ProxyExchange`), with the interfaces they name. Types
 * only (and `compressionOf`): every part of the server imports this file,
 * and it imports none of them.
 */

/** A part of the server: registers its routes and may extend the context. */
export type RoutePlugin = (app: Polka, ctx: ServerContext) => void | Promise<void>;

/**
 * Everything a route needs, built once per server instance. Later parts
 * (stats, cache, rate limit, budget, TOIN) add their own fields here.
 */
export interface ServerContext {
  config: Config;
  bus: SvcEventBus;
  ccr: CcrStore;
  /** The shared store (`--store redis://...`); undefined: state stays in memory and files. */
  store?: SharedStore;
  logger: Logger;
  /** Milliseconds since the epoch; injectable for tests. */
  now: () => number;
  /** svc version, from package.json. */
  version: string;
  /** Start-up time (ms since epoch). */
  startedAt: number;
  /**
   * Hooks run on shutdown after the server stopped accepting (flush files,
   * close stores). Registered by the parts that need them.
   */
  onClose: Array<() => Promise<void> | void>;
  /**
   * Proxied requests still running (each settles after its `request.finished` event): shutdown waits
   * for them before the `onClose` hooks, so a request cut at the end of the grace period is still
   * counted and logged.
   */
  inFlight: Set<Promise<void>>;
  /** Pricing table (shipped + `SERVICE_PRICING_PATH`); set by the stats plugin. */
  pricing?: PricingTable;
  /** Live session counters behind `/stats` and `/health`; set by the stats plugin. */
  liveStats?: LiveStats;
  /** The durable savings file; set by the stats plugin. */
  savings?: SavingsStore;
  /** The fleet's counters and metrics (`--store`); set by the stats plugin. */
  fleet?: FleetStats;
  /** Budget block of `/stats`; set by the budget guard. */
  budgetStatus?: () => BudgetStatus;
  /** Response-cache counters for `/stats` and `/metrics`; set by the response cache. */
  cacheStats?: () => CacheCounts | undefined;
  /** Response cache, rate limiter and budget; set by the guards part. */
  guards?: Guards;
  /** The engine entry point (injectable for tests). */
  compress: CompressFn;
  /** Per-content memo shared by every engine call of this server (principle 4). */
  engineMemo: ContentMemo;
  /** Parses request bodies, reusing the parse of the earlier turn of a conversation (principle 4). */
  bodies: PrefixParser;
  /** The stages of a proxied request (`PROXY_STAGES`, in order). */
  pipeline: ProxyRunner;
  /** Upstream calls (one undici Agent: keep-alive pools, timeouts). */
  upstream: UpstreamClient;
  /** Execution provider of the ML compressor, when `--mlcompress` loaded a model. */
  mlProvider?: string;
  /** What TOIN learned (opened by the TOIN plugin); its advice goes to every engine call. */
  toin?: ToinStore;
  /** The worker that reads and compresses bodies of `--large-body-bytes` or more; undefined: all in process. */
  largeBodies?: LargeBodies;
}

/** What the upstream answered: status, headers and the body as it streams. */
export interface UpstreamResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
  /**
   * The usage in `body`, when a stage read the whole answer already (the
   * retrieval loop): `relay` then does not read it again. Undefined: not read
   * (or the answer reports none; `relay` reads it then).
   */
  usage?: ReportedUsage | undefined;
}

/**
 * One proxied request on its way through the pipeline. Stages read and
 * fill in its typed fields; what one stage leaves for a later one has a
 * field of its own (`spliced`, `cachePlan`, `retrieval`).
 */
export interface ProxyExchange {
  ctx: ServerContext;
  req: IncomingMessage;
  res: ServerResponse;
  /** Path without query, e.g. `/v1/messages`. */
  path: string;
  /** Query string with its `?`, or ''. */
  search: string;
  /** The provider format of the path; undefined for other `/v1` paths (pure passthrough). */
  format: ProviderFormat | undefined;
  /**
   * The format's token-counting path (`format.tokenCountPath`): compressed
   * and forwarded as a model call would be, but no model is called, so the
   * guards (rate limit, cache, budget) leave it alone.
   */
  countsTokens: boolean;
  /** Upstream base URL up to and including `/v1`. */
  upstreamBase: string;
  /** The client's provider key (sent upstream as is); never log it. */
  clientKey: string | undefined;
  /** Request body as received; undefined when streamed through unread (other paths). */
  body: RequestBody | undefined;
  /** Decoded body text and its JSON, when the body is JSON. */
  text: string | undefined;
  json: Record<string, unknown> | undefined;
  /** Spans of `json`'s messages array in `text`, found while parsing (speeds up splicing). */
  hints: SpanHints | undefined;
  /** The request in the engine's model (formats only, when it parsed). */
  parsed: ParsedRequest | undefined;
  /**
   * A body the large-body worker read (then `text`, `json`, `parsed` stay
   * undefined: the guards use its facts, and the worker compresses it).
   */
  large?: LargeBodyJob | undefined;
  /** The engine's output, when compression ran and its originals are stored. */
  output: EngineOutput | undefined;
  /** Skip compression (`--no-optimize`, `x-service-bypass: true`, unreadable body). */
  skipCompression: boolean;
  /** What goes upstream: the original bytes unless a stage replaced them. */
  outBody: Buffer | Readable;
  /** `content-encoding` of `outBody`; undefined for identity. */
  outEncoding: string | undefined;
  /** Aborted when the client goes away; cancels the upstream call. */
  signal: CancelSignal;
  /** Calls the upstream with a body (used by `forward`, and by stages that need extra calls). */
  callUpstream(body: Buffer | Readable, encoding?: string | undefined): Promise<UpstreamResponse>;
  /** The response being relayed, once `forward` has it. */
  upstream: UpstreamResponse | undefined;
  /** Called with every response chunk sent to the client (as sent: still encoded). */
  responseTaps: Array<(chunk: Buffer) => void>;
  /**
   * Called shortly after the request has been handed to the upstream, while
   * the answer is awaited (`forward`): work the request path need not wait
   * for. A hook must also be safe to skip: a request may end before it runs.
   */
  afterForward: Array<() => void>;
  /** Called once the response has ended, before the event is emitted. */
  onFinish: Array<(ex: ProxyExchange) => void | Promise<void>>;
  /**
   * Fills in the event's token counts (before, after, saved, transforms),
   * once: set by `splice`, extended by `retrieval-tool`, called by the first
   * `onFinish` hook (or earlier by a stage that needs them after forwarding).
   * Counting new content takes milliseconds, so it never runs before the
   * request is forwarded (issue 19).
   */
  countTokens?: (() => Promise<void>) | undefined;
  /** The `request.finished` event being filled in. */
  pending: PendingEvent;
  event: RequestFinishedEvent;
  /** The body `splice` wrote and its text (valid while `outBody` is still `spliced.body`). */
  spliced: SplicedText | undefined;
  /** Set by the guards on a cache miss: where `cache-record` stores the answer. */
  cachePlan: CachePlan | undefined;
  /**
   * The response cache's outcome (`HIT`, `MISS`, `BYPASS`), set by the guards:
   * the `x-service-cache` header of the answer (added with the relayed headers,
   * so they are written in one go; an error answer sets it too).
   */
  cacheOutcome?: string | undefined;
  /** Set by `retrieval-tool` when it offered the tool: what the retrieval loop continues. */
  retrieval: RetrievalState | undefined;
}

/** The spliced body and its text. */
export interface SplicedText {
  body: Buffer;
  text: string;
}

/** Where the answer to a cache miss is stored. */
export interface CachePlan {
  key: string;
}

/** What the retrieval loop needs to continue a request upstream. */
export interface RetrievalState {
  /** The body as forwarded (with the retrieval tool). */
  text: string;
  format: ProviderFormat;
}

/** One step of the request pipeline; call `next()` to go on, or answer and return. */
export interface ProxyStage {
  name: string;
  run(ex: ProxyExchange, next: () => Promise<void>): Promise<void>;
}

/** Where to put a new stage, relative to a named one. */
export type StagePosition = { before: string } | { after: string };

/** Runs the stages of a proxied request (`ProxyPipeline`). */
export interface ProxyRunner {
  readonly stages: ProxyStage[];
  /** Inserts `stage` before or after the stage named in `at` (tests observe the seam with it). */
  insert(stage: ProxyStage, at: StagePosition): void;
  run(ex: ProxyExchange): Promise<void>;
}

/**
 * What cancels a request's upstream calls: an event emitter that emits
 * `abort` once and then reads `aborted` true, which undici takes as a
 * `signal` (`RequestCancel` in proxy/upstream.ts).
 */
export interface CancelSignal extends EventEmitter {
  readonly aborted: boolean;
}

/** One upstream request: where, how, and the signal that cancels it. */
export interface UpstreamCall {
  url: string;
  method: string;
  headers: string[];
  body: Buffer | Readable | undefined;
  signal: CancelSignal;
}

/** Calls upstreams through one undici Agent (keep-alive pools per origin, svc's timeouts). */
export interface UpstreamClient {
  /** Throws SvcError (502/504) when the upstream cannot be reached; rethrows the abort when the client left. */
  call(call: UpstreamCall): Promise<UpstreamResponse>;
  /** Loads undici ahead of the first request (it is imported lazily to keep start-up fast). */
  warm(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A `request.finished` event being filled in while a request runs. `start`
 * is a `performance.now()` reading taken when the request arrived.
 */
export interface PendingEvent {
  event: RequestFinishedEvent;
  start: number;
}

/** The engine call as this server makes it: its config, engine, memo, CCR store and TOIN (see `compressAndStore`). */
export function compressionOf(ctx: ServerContext): Compression {
  const toin = ctx.toin;
  return {
    config: ctx.config,
    compress: ctx.compress,
    ccr: ctx.ccr,
    memo: ctx.engineMemo,
    toin: toin ? () => toin.advice() : undefined,
    observed: (observations) => ctx.bus.emit('toin.observed', { time: new Date(ctx.now()), observations }),
    now: ctx.now,
  };
}
