import { errorBody, errorType, svcErrorFields } from '../chat/response.js';
import type { ProviderFormat, ToolSpec } from '../types.js';
import { checkShape, signal } from './check.js';
import { fromChat, maxTokens, toChat } from './request.js';
import {
  continuation,
  ownToolCalls,
  toolCallsFromResponse,
  toolResults,
  usageFromJson,
  withoutOwnToolCalls,
} from './response.js';
import { classifySseEvent, createSseUsageReader, createStreamRelay } from './stream.js';

/**
 * The OpenAI Responses format (`POST /v1/responses`, what Codex speaks). It
 * goes to the OpenAI-compatible upstream, and its errors have OpenAI's shape.
 */
export const responsesFormat: ProviderFormat = {
  name: 'responses',
  path: '/v1/responses',
  tokenCountPath: '/v1/responses/input_tokens',
  messagesPath: ['input'],
  toChat,
  fromChat,
  maxTokens,
  signal,
  checkShape,
  upstreamUrl: (urls) => urls.compatApiUrl,
  usageFromJson,
  createSseUsageReader,
  errorBody,
  errorType,
  svcErrorFields,
  toolDefinition: (tool: ToolSpec) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: tool.schema,
    strict: false,
  }),
  toolCallsFromResponse,
  continuation,
  ownToolCalls,
  withoutOwnToolCalls,
  toolResults,
  classifySseEvent,
  createStreamRelay,
};
