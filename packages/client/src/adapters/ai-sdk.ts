/**
 * AI SDK adapter: a language-model middleware whose `transformParams`
 * compresses the prompt of every call, `generateText` and `streamText` alike,
 * and `withCompression(model)`, the model wrapped with it.
 *
 * @example
 * import { generateText } from 'ai';
 * import { withCompression } from 'svc-proxy-client/ai-sdk';
 * const model = withCompression(openai('gpt-4o'));
 * const { text } = await generateText({ model, messages });
 */
import { type LanguageModelMiddleware, wrapLanguageModel } from 'ai';
import { type AiSdkMessage, aiSdkView } from '../convert-ai-sdk.js';
import { type AdapterOptions, adapterClient, compressThroughView } from './shared.js';

/** The model type `wrapLanguageModel` accepts (a `LanguageModelV2`). */
export type WrappableModel = Parameters<typeof wrapLanguageModel>[0]['model'];

/** The middleware: compresses `params.prompt` for generate and stream calls. */
export function compressionMiddleware(options: AdapterOptions = {}): LanguageModelMiddleware {
  const svc = adapterClient(options);
  return {
    middlewareVersion: 'v2',
    async transformParams({ params, model }) {
      const prompt = params.prompt as unknown as AiSdkMessage[];
      const call = { model: options.model ?? model.modelId, signal: params.abortSignal };
      const request = { prompt };
      const result = await compressThroughView(request, aiSdkView(prompt), svc, call, options.onResult);
      return result === request
        ? params
        : { ...params, prompt: result.prompt as unknown as typeof params.prompt };
    },
  };
}

/** The model with the compression middleware applied. */
export function withCompression(model: WrappableModel, options: AdapterOptions = {}): WrappableModel {
  return wrapLanguageModel({ model, middleware: compressionMiddleware(options) });
}

export type { AdapterOptions } from './shared.js';
