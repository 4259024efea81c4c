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

/** The messages format (Anthropic's `POST /v1/messages`). */
export const messagesFormat: ProviderFormat = {
  name: 'messages',
  path: '/v1/messages',
  tokenCountPath: '/v1/messages/count_tokens',
  messagesPath: ['messages'],
  alternatesRoles: true,
  toChat,
  fromChat,
  signal,
  checkShape,
  upstreamUrl: (urls) => urls.messagesApiUrl,
  // Token counting, batches and anything sent with `anthropic-version` go to Anthropic.
  claimsPassthrough: (path, headers) =>
    path.startsWith('/v1/messages') || headers['anthropic-version'] !== undefined,
  usageFromJson,
  createSseUsageReader,
  errorBody,
  errorType,
  svcErrorFields,
  toolDefinition: (tool: ToolSpec) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.schema,
  }),
  toolCallsFromResponse,
  continuation,
  ownToolCalls,
  withoutOwnToolCalls,
  toolResults,
  classifySseEvent,
  createStreamRelay,
};
