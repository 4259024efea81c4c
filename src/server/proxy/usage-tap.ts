import { once } from 'node:events';
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';
import type { ReportedUsage } from '../../events.js';
import { createSseTap, type ProviderFormat } from '../../formats/index.js';

/** Reads usage from a response as it is relayed, without holding it up. */
export interface UsageTap {
  /** A chunk as relayed to the client (still content-encoded). */
  write(chunk: Buffer): void;
  /**
   * Call once the response ended: the usage, undefined when none could be
   * read; a promise only while a compressed answer is still being decoded.
   */
  end(): ReportedUsage | undefined | Promise<ReportedUsage | undefined>;
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
  // the common answer: JSON as it is (no decoder, no stream)
  if (!sse && !unzip) return new JsonUsageTap(format);
  const decoder = sse ? new TextDecoder() : undefined;
  const tap = sse ? createSseTap(format) : undefined;
  const json = sse ? undefined : new JsonUsageTap(format);
  const take = (chunk: Buffer) => {
    if (tap) tap.feed(decoder!.decode(chunk, { stream: true }));
    else json!.write(chunk);
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
    return json!.end();
  };
  return {
    write(chunk) {
      if (unzip) {
        if (!broken) unzip.write(chunk);
      } else take(chunk);
    },
    end() {
      if (!unzip || broken) return finish();
      unzip.end();
      return Promise.race([once(unzip, 'end'), once(unzip, 'error')])
        .catch(() => undefined)
        .then(finish);
    },
  };
}

/** Usage of a JSON answer: its chunks kept (up to `MAX_JSON_BYTES`), parsed once it ended. */
class JsonUsageTap implements UsageTap {
  private readonly chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly format: ProviderFormat) {}

  write(chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size <= MAX_JSON_BYTES) this.chunks.push(chunk);
  }

  end(): ReportedUsage | undefined {
    const { chunks, size } = this;
    if (size > MAX_JSON_BYTES) return undefined;
    try {
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      return this.format.usageFromJson(JSON.parse(bytes.toString('utf8')));
    } catch {
      return undefined;
    }
  }
}
