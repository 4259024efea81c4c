import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { FORMATS, type FormatName } from '../formats/index.js';
import type { CacheMode } from './cache-key.js';
import type { CachedResponse } from './response-cache.js';

/** The provider formats whose streams can be cached (every one). */
export type StreamFormat = FormatName;

/**
 * How a stream of `format` ends cleanly, and what marks a failure inside it
 * (`ProviderFormat.classifySseEvent`).
 */
export function classifySseEvent(
  format: StreamFormat,
  event: EventSourceMessage,
): 'final' | 'error' | 'data' {
  return FORMATS[format].classifySseEvent(event);
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
