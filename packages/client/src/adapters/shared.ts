/**
 * What every adapter shares: its options, the one compression step through a
 * chat view, and the proxy that replaces one method of an SDK client while
 * every other property passes through untouched.
 */
import { CompressionClient, fallbackResult } from '../core.js';
import { SvcClientError } from '../errors.js';
import { type ChatView, spliceResult, viewMessages } from '../splice.js';
import type { CompressionClientOptions, CompressResult } from '../types.js';

/** Options of every adapter: the client options, or a client to reuse, plus a result hook. */
export interface AdapterOptions extends CompressionClientOptions {
  /** A client to reuse; when given, the other client options are ignored. */
  client?: CompressionClient;
  /**
   * Called with every compression result, fallbacks included (`compressed:
   * false` with `error`), so savings and failures can be logged or counted.
   */
  onResult?: (result: CompressResult) => void;
}

/** The client an adapter uses. */
export function adapterClient(options: AdapterOptions): CompressionClient {
  const { client, onResult: _onResult, ...clientOptions } = options;
  return client ?? new CompressionClient(clientOptions);
}

/** Per-call settings an adapter passes to `compress`. */
export interface ViewCall {
  model: string | undefined;
  signal: AbortSignal | undefined;
}

/**
 * Compresses a request through its chat view and splices the result back.
 * Returns the request itself when nothing changed or on a fallback; throws
 * what `compress` throws when fallback does not apply.
 */
export async function compressThroughView<T>(
  request: T,
  view: ChatView,
  svc: CompressionClient,
  call: ViewCall,
  onResult: AdapterOptions['onResult'],
): Promise<T> {
  const messages = viewMessages(view);
  if (messages.length === 0) return request;
  const result = await svc.compress(messages, { model: call.model, signal: call.signal });
  if (!result.compressed) {
    onResult?.(result);
    return request;
  }
  const spliced = spliceResult(request, view, result.messages);
  if (spliced === null) {
    const error = new SvcClientError(
      'SVC_CLIENT_SPLICE',
      'the compressed messages do not line up with the request; it was sent uncompressed',
      { transient: true },
    );
    if (!svc.fallback) throw error;
    onResult?.(fallbackResult(messages, error));
    return request;
  }
  onResult?.(result);
  return spliced;
}

/** The part of an SDK's `APIPromise` the adapters keep. */
interface ApiPromiseLike<T> extends PromiseLike<T> {
  withResponse?: () => Promise<unknown>;
  asResponse?: () => Promise<unknown>;
}

/**
 * The promise an intercepted `create` returns: awaits to what the SDK's own
 * `create` gives (a result or a stream) and keeps `withResponse()` and
 * `asResponse()`. Nothing reads the SDK's response until one is used.
 */
export class PendingCreate<T> implements PromiseLike<T> {
  readonly #call: Promise<{ sdk: ApiPromiseLike<T> }>;

  constructor(call: Promise<{ sdk: ApiPromiseLike<T> }>) {
    this.#call = call;
    // Observed here so an unused pending call never becomes an unhandled rejection;
    // every method below still sees the failure.
    call.catch(() => {});
  }

  // biome-ignore lint/suspicious/noThenProperty: this is a promise-like on purpose
  then<A = T, B = never>(
    onFulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#call.then(({ sdk }) => sdk).then(onFulfilled, onRejected);
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<T | B> {
    return this.then(undefined, onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<T> {
    return this.then().finally(onFinally);
  }

  /** The SDK's `withResponse()`: `{ data, response }`. */
  withResponse(): Promise<unknown> {
    return this.#call.then(({ sdk }) => sdk.withResponse!());
  }

  /** The SDK's `asResponse()`: the raw `Response`. */
  asResponse(): Promise<unknown> {
    return this.#call.then(({ sdk }) => sdk.asResponse!());
  }
}

/** A method of an SDK resource, called with its body and request options. */
export type SdkMethod = (this: unknown, body: unknown, options?: unknown) => unknown;

/**
 * Returns a view of `root` in which the method at `path` (for instance
 * `['chat', 'completions', 'create']`) is replaced by `make(original, owner)`.
 * Everything else reads through to the real objects. Methods of the root are
 * bound to it (SDK clients keep private fields); methods of the resources on
 * the way keep the proxy as `this`, so their helpers (`messages.stream`) call
 * the replaced method.
 */
export function replaceMethod<T extends object>(
  root: T,
  path: string[],
  make: (original: SdkMethod, owner: object) => SdkMethod,
): T {
  const [head, ...rest] = path;
  const owner = root as Record<string, unknown>;
  const replacement =
    rest.length === 0
      ? make(owner[head!] as SdkMethod, root)
      : replaceMethod(owner[head!] as object, rest, make);
  const bindToTarget = rest.length > 0;
  return new Proxy(root, {
    get(target, prop, receiver) {
      if (prop === head) return replacement;
      const value = Reflect.get(target, prop, bindToTarget ? target : receiver);
      return bindToTarget && typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
