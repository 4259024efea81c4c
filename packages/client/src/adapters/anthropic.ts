/**
 * Anthropic client adapter: `withCompression(client)` compresses
 * `messages.create` (streaming and not, and `messages.stream`, which calls
 * it) before the request leaves. Content blocks are converted to the chat
 * format for the service and the compressed texts spliced back in place, so
 * images, documents, thinking blocks with their signatures, cache_control and
 * the order of tool_use and tool_result blocks are exactly as they were.
 * Every other method is the client's own, untouched.
 *
 * @example
 * import Anthropic from '@anthropic-ai/sdk';
 * import { withCompression } from 'svc-proxy-client/anthropic';
 * const anthropic = withCompression(new Anthropic());
 * await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages });
 */
import { type AnthropicRequest, anthropicView } from '../convert-anthropic.js';
import {
  type AdapterOptions,
  adapterClient,
  compressThroughView,
  PendingCreate,
  replaceMethod,
  type SdkMethod,
} from './shared.js';

/** What the adapter needs of an Anthropic client. */
export interface MessagesClient {
  messages: { create(body: never, options?: never): unknown };
}

/** Wraps an Anthropic client; returns a new object, the client passed in is not modified. */
export function withCompression<T extends MessagesClient>(client: T, options: AdapterOptions = {}): T {
  const svc = adapterClient(options);
  return replaceMethod(client, ['messages', 'create'], (original, owner) => {
    async function compressBody(body: AnthropicRequest, signal: AbortSignal | undefined) {
      if (!body || !Array.isArray(body.messages) || body.messages.length === 0) return body;
      const model = options.model ?? (typeof body.model === 'string' ? body.model : undefined);
      return compressThroughView(body, anthropicView(body), svc, { model, signal }, options.onResult);
    }
    return function create(body: unknown, requestOptions?: unknown) {
      const signal = (requestOptions as { signal?: AbortSignal } | undefined)?.signal ?? undefined;
      const call = compressBody(body as AnthropicRequest, signal).then((compressed) => ({
        sdk: original.call(owner, compressed, requestOptions) as PromiseLike<unknown>,
      }));
      return new PendingCreate(call);
    } satisfies SdkMethod;
  });
}

export type { AdapterOptions } from './shared.js';
