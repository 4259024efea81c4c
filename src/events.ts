import { EventEmitter } from 'node:events';
import type { ShapeObservation } from './engine/context/types.js';
import type { FormatName } from './formats/names.js';

/** Usage the upstream reported for one response (tokens). */
export interface ReportedUsage {
  /** Input billed at the base rate (cache reads and writes excluded). */
  input: number;
  output: number;
  /** Input read from the provider's prompt cache. */
  cacheRead: number;
  /** Input written to the prompt cache, every TTL (0 for a provider that bills writes as input). */
  cacheWrite: number;
  /**
   * Of `cacheWrite`, the tokens written with a 1-hour TTL (Anthropic's
   * `cache_creation.ephemeral_1h_input_tokens`), priced at the 1-hour write
   * rate; the rest of `cacheWrite` is priced at the 5-minute rate. Absent or 0
   * for a provider or response without that tier.
   */
  cacheWrite1h?: number;
}

/** How a request was handled. Bounded set: used as a metrics label. */
export type RequestMode = 'optimize' | 'passthrough' | 'cached' | 'bypass' | 'compress' | 'rejected';

/** One per request, when its response has ended (or failed). */
export interface RequestFinishedEvent {
  time: Date;
  /** Request path, e.g. `/v1/messages`. */
  path: string;
  format: FormatName | 'compress' | 'other';
  mode: RequestMode;
  model: string | undefined;
  stream: boolean;
  /** Status sent to the client. */
  status: number;
  /** Status the upstream answered, when it was called. */
  upstreamStatus: number | undefined;
  /** Tokens of the whole request as the client sent it: messages (system included) and tool definitions. */
  tokensBefore: number;
  /** Tokens of the whole request as forwarded (svc's own svc_retrieve definition included). */
  tokensAfter: number;
  /** Tokens compression removed: `tokensBefore - tokensAfter + tokensAdded`. */
  tokensSaved: number;
  /** Tokens svc added to the forwarded request (the svc_retrieve tool definition); absent: 0. */
  tokensAdded?: number;
  transforms: string[];
  /** Whole request, first byte in to last byte out. */
  latencyMs: number;
  /** Time spent in svc before the upstream was called (parse, compress, splice). */
  overheadMs: number;
  usage: ReportedUsage | undefined;
  /**
   * Output tokens counted on a streamed answer that reported no usage (under
   * a budget), so that its output is priced too; undefined otherwise.
   */
  streamedOutputTokens?: number;
  /** USD of this request, from usage or counted tokens; undefined when unknown (unknown model). */
  costUsd: number | undefined;
  /** USD saved by compression; undefined when unknown. */
  savingsUsd: number | undefined;
  cached: boolean;
  rateLimited: boolean;
  /** Compression threw and the original was forwarded (fail-open). */
  compressionFailed: boolean;
  /** Error code when svc answered with an error of its own. */
  errorCode: string | undefined;
  /** sha256 prefix of the client's key, never the key. */
  keyHash: string | undefined;
  /** Project the request is attributed to (`x-svc-project` or `/p/NAME/`); absent: `default`. */
  project?: string;
  /** Client family from the user agent (`claude-code`, `codex`, `openai-sdk`, ...); absent: `other`. */
  client?: string;
  /** Id of this request (the request log links retrieval rounds to it); absent in events built elsewhere. */
  requestId?: string;
  /**
   * Upstream continuations svc sent to answer `svc_retrieve` inside the proxy
   * (docs/stats.md): their usage is in `usage`, their tokens in `tokensAfter`
   * and `retrievalTokens`, and taken off `tokensSaved`.
   */
  retrievalRounds?: RetrievalRound[];
  /** Tokens of the whole continuation requests svc sent in its retrieval rounds (0 or absent: none). */
  retrievalTokens?: number;
  /**
   * What the conversation's prompt cache held of this request before it: the
   * inputs of the cache-aware estimate (src/stats/cache-aware.ts), set after
   * the response; absent when the request was not read.
   */
  counterfactual?: Counterfactual;
  /**
   * USD saved against the cache-aware estimate of the same request without
   * svc (estimate less `costUsd`); negative when svc cost more; undefined
   * when unknown. Set once before the event is emitted.
   */
  cacheAwareSavingsUsd?: number;
  /** `--observe`: what compression would have saved on this request (nothing was changed). */
  projected?: ProjectedSavings;
}

/** One retrieval continuation svc sent upstream for a request. */
export interface RetrievalRound {
  /** 1 for the first continuation. */
  round: number;
  /** Tokens of the whole continuation request, as svc counts them. */
  tokens: number;
  /** Usage the upstream reported for it; undefined when it reported none. */
  usage: ReportedUsage | undefined;
  /** Its cost (priced once before the event is emitted); undefined when unknown. */
  costUsd?: number;
}

/** The inputs of the cache-aware estimate of one request (all in svc's token counts). */
export interface Counterfactual {
  /** Tokens of the whole request as the client sent it. */
  original: number;
  /** Of those, the prefix shared with the conversation's previous original request, still within the cache TTL. */
  cachedPrefix: number;
  /** Usage of the first upstream answer (before any retrieval round): the shape the estimate is priced like. */
  firstUsage: ReportedUsage | undefined;
  /** Tokens of the request as first forwarded (before any retrieval round). */
  forwarded: number;
  /** `--observe` only: the prefix the compressed request would have shared with the previous compressed one. */
  projectedPrefix?: number;
}

/** What compression would have saved on a request forwarded untouched (`--observe`). */
export interface ProjectedSavings {
  /** Tokens of the request as compression would have forwarded it. */
  tokensAfter: number;
  /** Tokens compression would have removed. */
  tokensSaved: number;
  /** Cache-aware USD it would have saved (set when priced); undefined when unknown. */
  savingsUsd?: number;
}

export interface RetrievedEvent {
  time: Date;
  hash: string;
  query: string | undefined;
  found: boolean;
  /** `endpoint`, `cli` or `tool` (answered inside the proxy's retrieval loop). */
  via: 'endpoint' | 'cli' | 'tool';
}

/** What TOIN should learn from one engine call (compressed and dropped tool outputs). */
export interface ToinObservedEvent {
  time: Date;
  observations: ShapeObservation[];
}

export interface SvcEvents {
  'request.finished': [RequestFinishedEvent];
  retrieved: [RetrievedEvent];
  'toin.observed': [ToinObservedEvent];
}

/**
 * The event bus observers subscribe to (stats, metrics, logs, TOIN). The
 * request path emits; it does not call observers one by one.
 */
export class SvcEventBus extends EventEmitter<SvcEvents> {}

/** A new bus; one per server instance. */
export function createEventBus(): SvcEventBus {
  const bus = new SvcEventBus();
  bus.setMaxListeners(50);
  return bus;
}
