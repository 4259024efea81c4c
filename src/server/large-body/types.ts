import type { IncomingHttpHeaders } from 'node:http';
import type { ToinAdvice } from '../../engine/context/types.js';
import type { EngineOutput } from '../../engine/types.js';
import type { RequestFinishedEvent } from '../../events.js';
import type { FormatName } from '../../formats/names.js';
import type { RequestShape } from '../../stats/prefix-shape.js';

/**
 * What the main thread and the large-body worker say to each other. The body
 * goes over once (in shared memory); everything that comes back is small
 * (facts, counts) except the new body (transferred, not copied) and the CCR
 * originals (which the main thread stores).
 */

/** Reads a body: parse it, and count what the guards need. */
export interface ReadRequest {
  type: 'read';
  id: number;
  format: FormatName;
  /** The decoded body (a view of a `SharedArrayBuffer` when it arrived large: no copy). */
  bytes: Uint8Array;
  path: string;
  search: string;
  /** `x-service-bypass` or `--no-optimize`: parse for the guards only. */
  skipCompression: boolean;
  /** What the guards will need (`guardNeeds`). */
  needs: { tokens: boolean; cacheKey: boolean };
  /** Hash of the client's key (cache key partition, CCR owner). */
  keyHash: string | undefined;
  headers: IncomingHttpHeaders;
}

/** Compresses the body a `read` kept: engine, splice, retrieval tool. */
export interface CompressRequest {
  type: 'compress';
  id: number;
  /** TOIN's advice at the time of the call. */
  toin: ToinAdvice | undefined;
}

/** Forgets the body a `read` kept (the request ended without compressing it). */
export interface ReleaseRequest {
  type: 'release';
  id: number;
}

/** `POST /v1/compress`: reads a `{messages, model}` body (and counts its tokens when asked). */
export interface ApiReadRequest {
  type: 'api-read';
  id: number;
  bytes: Uint8Array;
  /** Count the messages' tokens (the rate limit, or a bypass, needs them). */
  countTokens: boolean;
  /** Hash of the client's key (CCR owner). */
  keyHash: string | undefined;
}

/** `POST /v1/compress`: compresses the body an `api-read` kept and writes the response body. */
export interface ApiCompressRequest {
  type: 'api-compress';
  id: number;
  bypass: boolean;
  toin: ToinAdvice | undefined;
}

export type WorkerRequest =
  | ReadRequest
  | CompressRequest
  | ReleaseRequest
  | ApiReadRequest
  | ApiCompressRequest;

/** What `api-read` found. */
export interface ApiFacts {
  model: string;
  /** Tokens of the messages (when asked; else 0). */
  tokens: number;
}

/** What `api-compress` produced: the response body (transferred) and the event's fields. */
export interface ApiCompressed {
  event: Required<Pick<CompressedFields, 'tokensBefore' | 'tokensAfter' | 'tokensSaved' | 'transforms'>>;
  body: ArrayBuffer;
  entries: Array<[string, string]>;
  observations: NonNullable<EngineOutput['observations']>;
}

/** An SvcError thrown in the worker, to be thrown again on the main thread. */
export interface WorkerSvcError {
  code: string;
  status: number;
  message: string;
  details: Record<string, unknown> | undefined;
}

/** What the main thread needs of a large body, as small values (no re-parse). */
export interface BodyFacts {
  /** The body is a JSON object. */
  object: boolean;
  model: string | undefined;
  stream: boolean;
  /** `maxOutputTokens(body)`: the budget's output estimate. */
  maxOutputTokens: number;
  /** Tokens of the messages as sent (when the guards asked; 0: not readable). */
  inputTokens: number;
  /** The response-cache key (when the guards asked and the body is an object). */
  cacheKey: string | undefined;
  /** Messages the engine would get (0: nothing to compress). */
  messages: number;
  /** Compression is off: bypass, or the body is not JSON or not the format. */
  skipCompression: boolean;
  mode: RequestFinishedEvent['mode'];
}

/** One log line of the worker, replayed by the main thread's logger. */
export interface WorkerLog {
  level: 'error' | 'warn' | 'info' | 'debug';
  message: string;
  fields: Record<string, unknown> | undefined;
}

/** The event fields compression and splicing fill in. */
export type CompressedFields = Partial<
  Pick<
    RequestFinishedEvent,
    'tokensBefore' | 'tokensAfter' | 'tokensSaved' | 'transforms' | 'tokensAdded' | 'compressionFailed'
  >
>;

/** What `compress` produced. */
export interface Compressed {
  event: CompressedFields;
  /** The body to forward (identity encoding), when it changed; else the original goes. */
  body: ArrayBuffer | undefined;
  /** The retrieval tool was offered: the retrieval loop continues this body. */
  retrieval: boolean;
  /** CCR entries (hash, original) to store before forwarding (each sent ahead in a `WorkerEntry`). */
  entries: Array<[string, string]>;
  observations: NonNullable<EngineOutput['observations']>;
  /**
   * The request's prefix shape as sent (segment hashes, cumulative tokens,
   * model, first hashes): the cache-aware estimate's input, which the main
   * thread cannot compute without parsing the body. Undefined: no messages.
   */
  shape: RequestShape | undefined;
}

/** What every reply carries: the job's log lines, and the worker's heap size after it (bytes). */
interface ReplyCommon {
  id: number;
  logs: WorkerLog[];
  heap: number;
}

/**
 * One CCR entry of a compression, sent ahead of its reply: one message per
 * entry, so the main thread takes the originals in pieces between other work
 * rather than all at once.
 */
export interface WorkerEntry {
  id: number;
  entry: [string, string];
}

export type WorkerReply =
  | (ReplyCommon & { ok: true; facts: BodyFacts })
  | (ReplyCommon & { ok: true; compressed: Compressed })
  | (ReplyCommon & { ok: true; api: ApiFacts })
  | (ReplyCommon & { ok: true; apiCompressed: ApiCompressed })
  | (ReplyCommon & { ok: false; error: string; svc?: WorkerSvcError });

/** A large body held by the worker between `read` and `compress`. */
export interface LargeBodyJob {
  id: number;
  facts: BodyFacts;
  /** The request's prefix shape, once the worker compressed it (`Compressed.shape`). */
  shape?: RequestShape | undefined;
}

/** A `/v1/compress` body held by the worker between `api-read` and `api-compress`. */
export interface ApiJob {
  id: number;
  facts: ApiFacts;
}

/** The main thread's side of the large-body worker (`LargeBodyPool`). */
export interface LargeBodies {
  /** Bodies of this many bytes or more go to the worker. */
  readonly threshold: number;
  /** True when `bytes` is large enough for the worker. */
  takes(bytes: Buffer | undefined): bytes is Buffer;
  read(request: Omit<ReadRequest, 'type' | 'id'>): Promise<LargeBodyJob>;
  compress(job: LargeBodyJob, toin: ToinAdvice | undefined): Promise<Compressed>;
  release(job: LargeBodyJob | ApiJob): void;
  /** `POST /v1/compress`: reads the body (throws its SvcError when it is not a valid request). */
  apiRead(request: Omit<ApiReadRequest, 'type' | 'id'>): Promise<ApiJob>;
  /** `POST /v1/compress`: compresses it (throws the engine's SvcError). */
  apiCompress(job: ApiJob, bypass: boolean, toin: ToinAdvice | undefined): Promise<ApiCompressed>;
  /** Counters for tests and diagnostics. */
  readonly stats: { reads: number; compressions: number; failures: number; started: number };
  close(): Promise<void>;
}
