/**
 * svc client: an HTTP client of the svc service (`POST /v1/compress`,
 * `GET /v1/retrieve/:hash`). No compression runs here, and nothing of the
 * server is loaded: this entry uses only the global `fetch`.
 *
 * Adapters live in their own entries so no SDK is loaded unless asked for:
 * `svc-proxy-client/ai-sdk`, `svc-proxy-client/openai`, `svc-proxy-client/anthropic`.
 *
 * @example
 * import { compress } from 'svc-proxy-client';
 * const { messages, tokensSaved, compressed } = await compress(history, { model: 'gpt-4o' });
 */
export { CompressionClient, compress } from './core.js';
export {
  isSvcClientError,
  SvcAuthError,
  SvcClientError,
  type SvcClientErrorCode,
  type SvcClientErrorOptions,
  SvcCompressError,
  SvcConnectionError,
  SvcNotFoundError,
} from './errors.js';
export { CLIENT_DEFAULTS } from './options.js';
export type {
  ChatMessage,
  ChatOtherPart,
  ChatTextPart,
  ChatToolCall,
  CompressCallOptions,
  CompressionClientOptions,
  CompressOptions,
  CompressResult,
  RetrieveResult,
} from './types.js';
