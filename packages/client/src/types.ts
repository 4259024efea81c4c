/**
 * The client's own types. The client imports nothing from the rest of `src/`
 * (it ships as its own package entry), so it declares the chat format and the
 * compression result here; they mirror spec section 2.
 */
import type { SvcClientError } from './errors.js';

/** A text part of a chat message's content array. */
export interface ChatTextPart {
  type: 'text';
  text: string;
  [extra: string]: unknown;
}

/** Any other content part (image, audio, file, ...); passed through as is. */
export interface ChatOtherPart {
  type: string;
  [extra: string]: unknown;
}

/** One tool call of an assistant message. */
export interface ChatToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
  [extra: string]: unknown;
}

/** A chat-format message `{role, content, tool_calls?, tool_call_id?}` (spec section 1). */
export interface ChatMessage {
  role: string;
  content: string | Array<ChatTextPart | ChatOtherPart> | null;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  [extra: string]: unknown;
}

/**
 * What `compress` returns. With `compressed: false` (a fallback) the messages
 * are the ones passed in, `tokensSaved` is 0, `compressionRatio` is 1, and the
 * token counts are `null`: the client counts no tokens, and an unknown figure
 * is reported as unknown, never as a made-up number.
 */
export interface CompressResult {
  messages: ChatMessage[];
  tokensBefore: number | null;
  tokensAfter: number | null;
  tokensSaved: number;
  /** tokensAfter / tokensBefore. */
  compressionRatio: number;
  transformsApplied: string[];
  /** CCR references of content the service stored; redeem with `retrieve(hash)`. */
  ccrHashes: string[];
  /** False when the service could not be used and the messages are the originals. */
  compressed: boolean;
  /** Why a fallback happened (only when `compressed` is false). */
  error?: SvcClientError;
}

/** Options of the client object; every field is optional. */
export interface CompressionClientOptions {
  /** Service address. Default: env `SERVICE_BASE_URL`, else `http://localhost:8787`. */
  baseUrl?: string;
  /** Hosted-service key, sent as `Authorization: Bearer KEY`. Default: env `SERVICE_API_KEY`. */
  apiKey?: string;
  /** Model name, used by the service for token counting. */
  model?: string;
  /** Milliseconds for the whole call, retries and their waits included. Default 30000. */
  timeout?: number;
  /** Return the original messages (`compressed: false`) when the service is unreachable or fails. Default true. */
  fallback?: boolean;
  /** Retries on transient errors (connection errors, 5xx, 429); 1 means up to 2 attempts. Default 1. */
  retries?: number;
  /** Extra request headers (for instance a tracing id). */
  headers?: Record<string, string>;
  /** The fetch to use. Default: the global `fetch`. */
  fetch?: typeof fetch;
  /** Backoff wait; injectable so tests need no real sleeps. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Jitter source in [0, 1); injectable for tests. Default `Math.random`. */
  random?: () => number;
}

/** Per-call options of `compress`: override the client's for one call. */
export interface CompressCallOptions {
  model?: string;
  timeout?: number;
  fallback?: boolean;
  retries?: number;
  /** Cancels the call; a cancelled call rejects with the signal's reason (never a fallback). */
  signal?: AbortSignal;
  /** Sends `x-service-bypass: true`: the service returns the messages unchanged. */
  bypass?: boolean;
}

/** Options of the one-shot `compress(messages, options)` function. */
export type CompressOptions = CompressionClientOptions & CompressCallOptions;

/** An original redeemed from the CCR store. */
export interface RetrieveResult {
  hash: string;
  /** The original content, exactly as it was before compression. */
  content: string;
}
