/**
 * OpenAI client adapter: `withCompression(client)` compresses the messages of
 * `chat.completions.create` (streaming and not) before they leave; every
 * other method and property is the client's own, untouched.
 *
 * @example
 * import OpenAI from 'openai';
 * import { withCompression } from 'svc-proxy-client/openai';
 * const openai = withCompression(new OpenAI(), { model: 'gpt-4o' });
 * await openai.chat.completions.create({ model: 'gpt-4o', messages });
 */
import type { ChatMessage } from '../types.js';
import {
  type AdapterOptions,
  adapterClient,
  PendingCreate,
  replaceMethod,
  type SdkMethod,
} from './shared.js';

/** What the adapter needs of an OpenAI client. */
export interface ChatCompletionsClient {
  chat: { completions: { create(body: never, options?: never): unknown } };
}

interface ChatBody {
  model?: unknown;
  messages?: unknown;
  [extra: string]: unknown;
}

/**
 * Wraps an OpenAI client so `chat.completions.create` sends compressed
 * messages. The chat format is the service's own, so the service's messages
 * replace the request's as they are (parts it does not understand, such as
 * images and audio, come back unchanged). Returns a new object; the client
 * passed in is not modified.
 */
export function withCompression<T extends ChatCompletionsClient>(client: T, options: AdapterOptions = {}): T {
  const svc = adapterClient(options);
  return replaceMethod(client, ['chat', 'completions', 'create'], (original, owner) => {
    async function compressBody(body: ChatBody, signal: AbortSignal | undefined): Promise<ChatBody> {
      if (!body || !Array.isArray(body.messages) || body.messages.length === 0) return body;
      const model = options.model ?? (typeof body.model === 'string' ? body.model : undefined);
      const result = await svc.compress(body.messages as ChatMessage[], { model, signal });
      options.onResult?.(result);
      return result.compressed ? { ...body, messages: result.messages } : body;
    }
    return function create(body: unknown, requestOptions?: unknown) {
      const signal = (requestOptions as { signal?: AbortSignal } | undefined)?.signal ?? undefined;
      const call = compressBody(body as ChatBody, signal).then((compressed) => ({
        sdk: original.call(owner, compressed, requestOptions) as PromiseLike<unknown>,
      }));
      return new PendingCreate(call);
    } satisfies SdkMethod;
  });
}

export type { AdapterOptions } from './shared.js';
