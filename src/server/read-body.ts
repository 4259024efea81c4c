import type { IncomingMessage } from 'node:http';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { SvcError } from '../errors.js';
import { prematureClose } from './stream-errors.js';

/** A request body as received, and decoded when it was sent compressed. */
export interface RequestBody {
  /** The bytes as they arrived (still compressed when `encoding` is set). */
  raw: Buffer;
  /** `content-encoding` of the request, lowercased; undefined for identity. */
  encoding: string | undefined;
  /** The decoded bytes, or undefined when the encoding is one svc cannot decode. */
  decoded: Buffer | undefined;
}

type Decoder = (buf: Buffer, options: zlib.ZlibOptions | zlib.BrotliOptions) => Promise<Buffer>;

const DECODERS: Record<string, Decoder> = {
  gzip: promisify(zlib.gunzip),
  'x-gzip': promisify(zlib.gunzip),
  deflate: promisify(zlib.inflate),
  br: promisify(zlib.brotliDecompress),
};

function tooLarge(maxBytes: number, cause?: unknown): SvcError {
  return new SvcError('SVC_PAYLOAD_TOO_LARGE', `request body is larger than the limit of ${maxBytes} bytes`, {
    cause,
    details: { max_body_bytes: maxBytes },
  });
}

/**
 * The bytes in memory shared with worker threads (`SharedArrayBuffer`): a
 * large body goes to the worker that parses it without another copy.
 */
function sharedCopy(chunks: readonly Buffer[], size: number): Buffer {
  const out = Buffer.from(new SharedArrayBuffer(size));
  let at = 0;
  for (const c of chunks) at += c.copy(out, at);
  return out;
}

/**
 * The chunks of a request body, read with stream events (an async iterator
 * costs several microseconds more per request). Rejects as iterating the
 * request does: with its error, or a premature close; above `maxBytes` the
 * request is destroyed (as leaving the iteration does) and 413 thrown. A
 * body of declared length bound for shared memory is copied into `shared`
 * as it arrives (chunks past its length are kept, to be reported).
 */
function collect(
  req: IncomingMessage,
  maxBytes: number,
  shared: Buffer | undefined,
): Promise<{ chunks: Buffer[]; size: number }> {
  return new Promise((resolve, reject) => {
    // Dropped once settled: the listeners stay on the request (removing them costs more than the
    // close that comes after its end), and must not keep its chunks alive with it.
    let chunks: Buffer[] | undefined = [];
    let size = 0;
    if (req.readableEnded) return resolve({ chunks, size });
    if (req.destroyed) return reject(req.errored ?? prematureClose());
    const settle = (err?: Error) => {
      const got = chunks;
      if (!got) return;
      chunks = undefined;
      if (err) reject(err);
      else resolve({ chunks: got, size });
    };
    req.on('data', (chunk: Buffer) => {
      if (!chunks) return;
      size += chunk.length;
      if (size > maxBytes) {
        settle(tooLarge(maxBytes));
        req.destroy();
      } else if (shared && size <= shared.length) chunk.copy(shared, size - chunk.length);
      else chunks.push(chunk);
    });
    req.on('end', () => settle());
    req.on('error', (err: Error) => settle(err));
    // (the error only when it is given: its stack costs more than the rest of a close)
    req.on('close', () => {
      if (chunks) settle(prematureClose());
    });
  });
}

/**
 * Bytes already in memory that equal a body which arrived in `chunks`
 * (`size` bytes in all), or undefined (`PrefixParser.knownBytes`).
 */
export type KnownBytes = (chunks: readonly Buffer[], size: number) => Buffer | undefined;

/**
 * Reads a request body up to `maxBytes` (raw and decoded), decoding gzip,
 * deflate and br. Throws SVC_PAYLOAD_TOO_LARGE (413) above the limit, before
 * reading when `content-length` already says so, and SVC_BAD_REQUEST for a body
 * that does not decode. A body (decoded) of `sharedFrom` bytes or more is
 * held in shared memory (see `sharedCopy`). A body sent unencoded in several
 * pieces that `known` finds in memory is those bytes (not joined into a copy).
 */
export async function readBody(
  req: IncomingMessage,
  maxBytes: number,
  sharedFrom = Number.POSITIVE_INFINITY,
  known?: KnownBytes,
): Promise<RequestBody> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  const header = req.headers['content-encoding'];
  const encoding =
    typeof header === 'string' && header.trim() !== '' ? header.trim().toLowerCase() : undefined;
  const identity = encoding === undefined || encoding === 'identity';
  // a large body of declared length goes into shared memory chunk by chunk, as it arrives
  const shared =
    identity && Number.isFinite(declared) && declared >= sharedFrom
      ? Buffer.from(new SharedArrayBuffer(declared))
      : undefined;
  const { chunks, size } = await collect(req, maxBytes, shared);
  if (shared && size !== shared.length)
    throw new SvcError('SVC_BAD_REQUEST', 'request body shorter or longer than its content-length');
  const raw = shared
    ? shared
    : identity && size >= sharedFrom
      ? sharedCopy(chunks, size)
      : chunks.length === 1
        ? chunks[0]!
        : ((identity ? known?.(chunks, size) : undefined) ?? Buffer.concat(chunks, size));
  if (identity) return { raw, encoding: undefined, decoded: raw };
  const decode = DECODERS[encoding];
  if (!decode) return { raw, encoding, decoded: undefined };
  try {
    const decoded = await decode(raw, { maxOutputLength: maxBytes });
    return {
      raw,
      encoding,
      decoded: decoded.length >= sharedFrom ? sharedCopy([decoded], decoded.length) : decoded,
    };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(maxBytes, err);
    throw new SvcError('SVC_BAD_REQUEST', `request body is not valid ${encoding} data`, { cause: err });
  }
}
