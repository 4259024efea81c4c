import { once } from 'node:events';
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';
import type { ReportedUsage } from '../../events.js';
import { createSseTap, type ProviderFormat } from '../../formats/index.js';

/** Reads usage from a response as it is relayed, without holding it up. */
export interface UsageTap {
  /** A chunk as relayed to the client (still content-encoded). */
  write(chunk: Buffer): void;
  /** Call once the response ended; resolves with the usage, undefined when none could be read. */
  end(): Promise<ReportedUsage | undefined>;
}

/** JSON bodies larger than this are not kept for usage (usage is then unknown). */
const MAX_JSON_BYTES = 32 * 1024 * 1024;

function decompressor(encoding: string | undefined): Transform | null | undefined {
  switch (encoding) {
    case undefined:
    case 'identity':
      return null;
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      return undefined;
  }
}

/**
 * A usage tap for a provider response: SSE (`text/event-stream`) is parsed
 * event by event, JSON at the end; gzip, deflate and br are decoded on the
 * side. Undefined when the response cannot carry readable usage.
 */
export function createUsageTap(
  format: ProviderFormat,
  contentType: string | undefined,
  contentEncoding: string | undefined,
): UsageTap | undefined {
  const type = (contentType ?? '').toLowerCase();
  const sse = type.includes('text/event-stream');
  if (!sse && !type.includes('json')) return undefined;
  const unzip = decompressor(contentEncoding?.trim().toLowerCase());
  if (unzip === undefined) return undefined;
  const decoder = sse ? new TextDecoder() : undefined;
  const tap = sse ? createSseTap(format) : undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  const take = (chunk: Buffer) => {
    if (tap) tap.feed(decoder!.decode(chunk, { stream: true }));
    else {
      size += chunk.length;
      if (size <= MAX_JSON_BYTES) chunks.push(chunk);
    }
  };
  let broken = false;
  if (unzip) {
    unzip.on('data', take);
    unzip.on('error', () => {
      broken = true;
    });
  }
  const finish = (): ReportedUsage | undefined => {
    if (broken) return undefined;
    if (tap) {
      tap.feed(decoder!.decode());
      return tap.usage();
    }
    if (size > MAX_JSON_BYTES) return undefined;
    try {
      return format.usageFromJson(JSON.parse(Buffer.concat(chunks, size).toString('utf8')));
    } catch {
      return undefined;
    }
  };
  return {
    write(chunk) {
      if (unzip) {
        if (!broken) unzip.write(chunk);
      } else take(chunk);
    },
    async end() {
      if (unzip && !broken) {
        unzip.end();
        await Promise.race([once(unzip, 'end'), once(unzip, 'error')]).catch(() => undefined);
      }
      return finish();
    },
  };
}
