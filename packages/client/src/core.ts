import { SvcClientError, SvcCompressError } from './errors.js';
import { type ResolvedClientOptions, resolveCallOptions, resolveClientOptions } from './options.js';
import { sendRequest } from './transport.js';
import type {
  ChatMessage,
  CompressCallOptions,
  CompressionClientOptions,
  CompressOptions,
  CompressResult,
  RetrieveResult,
} from './types.js';

function invalidResult(field: string, status: number): SvcCompressError {
  // A 2xx we cannot read means the service is not working as it should:
  // transient, so `fallback: true` returns the originals rather than break the app.
  return new SvcCompressError(
    `svc /v1/compress answered ${status} with an invalid compression result: ${field}`,
    {
      status,
      transient: true,
    },
  );
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** Checks the wire result (spec section 2) and renames it to the client's fields. */
function parseCompressionResult(body: unknown, status: number): CompressResult {
  if (!body || typeof body !== 'object') throw invalidResult('body is not a JSON object', status);
  const r = body as Record<string, unknown>;
  const messages = r.messages;
  if (
    !Array.isArray(messages) ||
    !messages.every((m) => m && typeof m === 'object' && typeof m.role === 'string')
  ) {
    throw invalidResult('messages must be an array of chat messages', status);
  }
  for (const field of ['tokens_before', 'tokens_after', 'tokens_saved', 'compression_ratio']) {
    if (!isCount(r[field])) throw invalidResult(`${field} must be a number`, status);
  }
  if (!isStringArray(r.transforms_applied))
    throw invalidResult('transforms_applied must be an array of strings', status);
  // ccr_hashes is optional on the wire so an older service still works.
  if (r.ccr_hashes !== undefined && !isStringArray(r.ccr_hashes)) {
    throw invalidResult('ccr_hashes must be an array of strings', status);
  }
  return {
    messages: messages as ChatMessage[],
    tokensBefore: r.tokens_before as number,
    tokensAfter: r.tokens_after as number,
    tokensSaved: r.tokens_saved as number,
    compressionRatio: r.compression_ratio as number,
    transformsApplied: r.transforms_applied,
    ccrHashes: (r.ccr_hashes as string[] | undefined) ?? [],
    compressed: true,
  };
}

/**
 * The result of a fallback: the caller's messages untouched. Token counts are
 * unknown to the client, so they are `null` (principle 5), not guessed.
 */
export function fallbackResult(messages: ChatMessage[], error: SvcClientError): CompressResult {
  return {
    messages,
    tokensBefore: null,
    tokensAfter: null,
    tokensSaved: 0,
    compressionRatio: 1,
    transformsApplied: [],
    ccrHashes: [],
    compressed: false,
    error,
  };
}

/**
 * A reusable client of the svc service. Holds the address, key and defaults;
 * the key is kept private and never appears in errors.
 *
 * @example
 * const svc = new CompressionClient({ baseUrl: 'http://localhost:8787', model: 'gpt-4o' });
 * const { messages, tokensSaved, compressed } = await svc.compress(history);
 * const original = await svc.retrieve(hash);
 */
export class CompressionClient {
  readonly #options: ResolvedClientOptions;

  constructor(options: CompressionClientOptions = {}) {
    this.#options = resolveClientOptions(options);
  }

  /** The service address in use. */
  get baseUrl(): string {
    return this.#options.baseUrl;
  }

  /** Whether this client falls back to the original messages by default. */
  get fallback(): boolean {
    return this.#options.fallback;
  }

  /**
   * Sends `messages` to `POST /v1/compress`. Unreachable service or 5xx (after
   * retries): the originals with `compressed: false` when `fallback` is on,
   * else a `SvcConnectionError` / `SvcCompressError`. 401 always throws
   * `SvcAuthError`; 400 always throws `SvcCompressError`.
   */
  async compress(messages: ChatMessage[], options: CompressCallOptions = {}): Promise<CompressResult> {
    if (!Array.isArray(messages)) {
      throw new SvcClientError('SVC_CLIENT_BAD_OPTION', 'messages must be an array of chat messages');
    }
    const opts = resolveCallOptions(this.#options, options);
    const body: Record<string, unknown> = { messages };
    if (opts.model !== undefined) body.model = opts.model;
    try {
      const res = await sendRequest(
        {
          method: 'POST',
          path: '/v1/compress',
          body,
          headers: opts.bypass ? { 'x-service-bypass': 'true' } : {},
        },
        opts,
      );
      return parseCompressionResult(res.json, res.status);
    } catch (err) {
      if (opts.fallback && err instanceof SvcClientError && err.transient)
        return fallbackResult(messages, err);
      throw err;
    }
  }

  /**
   * Fetches an original stored in the CCR store (`GET /v1/retrieve/:hash`).
   * Throws `SvcNotFoundError` for an unknown or expired hash. No fallback:
   * there is nothing to fall back to.
   */
  async retrieve(
    hash: string,
    options: Pick<CompressCallOptions, 'timeout' | 'retries' | 'signal'> = {},
  ): Promise<RetrieveResult> {
    if (typeof hash !== 'string' || hash === '') {
      throw new SvcClientError('SVC_CLIENT_BAD_OPTION', 'hash must be a non-empty string');
    }
    const opts = resolveCallOptions(this.#options, options);
    const res = await sendRequest({ method: 'GET', path: `/v1/retrieve/${encodeURIComponent(hash)}` }, opts);
    return parseRetrieveResult(hash, res);
  }
}

function parseRetrieveResult(
  hash: string,
  res: { json: unknown; text: string; status: number },
): RetrieveResult {
  if (res.json === undefined) return { hash, content: res.text };
  const body = res.json as Record<string, unknown> | null;
  for (const field of ['content', 'original']) {
    const value = body?.[field];
    if (typeof value === 'string') return { hash, content: value };
  }
  throw new SvcCompressError(`svc /v1/retrieve answered ${res.status} without a content string`, {
    status: res.status,
  });
}

/**
 * One-shot compression with a throwaway client.
 *
 * @example
 * const result = await compress(messages, { model: 'gpt-4o' });
 * if (!result.compressed) console.warn('svc unavailable:', result.error?.message);
 */
export function compress(messages: ChatMessage[], options: CompressOptions = {}): Promise<CompressResult> {
  const { signal, bypass, ...clientOptions } = options;
  return new CompressionClient(clientOptions).compress(messages, { signal, bypass });
}
