import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { CacheMode } from './cache-key.js';
import type { CachedResponse } from './response-cache.js';

/** The two provider wire formats whose streams can be cached. */
export type StreamFormat = 'messages' | 'chat';

/**
 * How a stream of each format ends cleanly, and what marks a failure inside
 * it. Messages format: a `message_stop` event; an `error` event is a failure.
 * Chat format: `data: [DONE]`; a chunk carrying `error` is a failure.
 */
export function classifySseEvent(
  format: StreamFormat,
  event: EventSourceMessage,
): 'final' | 'error' | 'data' {
  if (format === 'messages') {
    if (event.event === 'message_stop') return 'final';
    if (event.event === 'error') return 'error';
    if (event.event === undefined && /"type"\s*:\s*"message_stop"/.test(event.data)) return 'final';
    return /^\s*\{\s*"type"\s*:\s*"error"/.test(event.data) ? 'error' : 'data';
  }
  if (event.data.trim() === '[DONE]') return 'final';
  if (event.event === 'error') return 'error';
  return /^\s*\{\s*"error"\s*:/.test(event.data) ? 'error' : 'data';
}

export interface ResponseRecorderOptions {
  format: StreamFormat;
  /** `sse` (default): complete only with its final event; `json`: complete when the body ended. */
  mode?: CacheMode;
  status: number;
  /** Headers to replay (already filtered with `cacheableHeaders`). */
  headers: Record<string, string>;
  model: string | undefined;
  /** Stop recording past this many bytes (the cache could not hold it anyway). */
  maxBytes: number;
  now: () => number;
}

/** Collects an answer's bytes as they pass through, to cache them once it has ended cleanly. */
export interface ResponseRecorder {
  /** Feeds a chunk exactly as it was sent to the client. */
  push(chunk: Buffer): void;
  /**
   * Called when the upstream body ended without error. Returns the entry to
   * cache when the answer was complete (status 200, within the byte bound;
   * for a stream: final event seen, no error event), else undefined.
   */
  finish(): CachedResponse | undefined;
}

/**
 * A recorder for one answer. For a stream it parses the events only to see
 * how the stream ends; the bytes are kept as they were.
 */
export function createResponseRecorder(options: ResponseRecorderOptions): ResponseRecorder {
  const mode = options.mode ?? 'sse';
  const chunks: Buffer[] = [];
  let bytes = 0;
  let state: 'open' | 'final' | 'failed' = options.status === 200 ? 'open' : 'failed';
  const decoder = new TextDecoder();
  const parser = createParser({
    onEvent(event) {
      const kind = classifySseEvent(options.format, event);
      if (kind === 'error') state = 'failed';
      else if (kind === 'final' && state === 'open') state = 'final';
    },
  });
  return {
    push(chunk) {
      if (state === 'failed') return;
      bytes += chunk.length;
      if (bytes > options.maxBytes) {
        state = 'failed';
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
      if (mode === 'sse') parser.feed(decoder.decode(chunk, { stream: true }));
    },
    finish() {
      if (mode === 'sse') {
        parser.feed(decoder.decode());
        parser.reset({ consume: true });
      } else if (state === 'open') state = 'final';
      if (state !== 'final') return undefined;
      return {
        mode,
        status: options.status,
        headers: options.headers,
        body: Buffer.concat(chunks),
        model: options.model,
        storedAt: options.now(),
      };
    },
  };
}
