import type { ProviderFormat, ToolSpec } from '../types.js';
import { checkShape, signal } from './check.js';
import { fromChat, toChat } from './request.js';
import {
  continuation,
  errorBody,
  errorType,
  ownToolCalls,
  svcErrorFields,
  toolCallsFromResponse,
  toolResults,
  usageFromJson,
  withoutOwnToolCalls,
} from './response.js';
import { classifySseEvent, createSseUsageReader, createStreamRelay } from './stream.js';

/** The chat-completions format (`POST /v1/chat/completions`), OpenAI and every compatible API. */
export const chatFormat: ProviderFormat = {
  name: 'chat',
  path: '/v1/chat/completions',
  messagesPath: ['messages'],
  toChat,
  fromChat,
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
    function: { name: tool.name, description: tool.description, parameters: tool.schema },
  }),
  toolCallsFromResponse,
  continuation,
  ownToolCalls,
  withoutOwnToolCalls,
  toolResults,
  classifySseEvent,
  createStreamRelay,
};
