import type { ChatMessage } from '../engine/types.js';
import type { ReportedUsage } from '../events.js';
import type { JsonPath } from '../json/spans.js';

/** The provider formats svc speaks. */
export type FormatName = 'messages' | 'chat';

/**
 * Where one engine (chat-format) message came from in the request body, so
 * its compressed content can be written back to exactly those bytes.
 */
export interface ChatOrigin {
  /** Path of the string holding this message's content, when the body has a string there. */
  text?: JsonPath;
  /** For content made of blocks: the body path of the block behind each chat part, in order. */
  parts?: JsonPath[];
  /**
   * What leaves the body when the engine drops this message: the whole body
   * message, or (for a message split into several chat messages) its blocks.
   */
  owns: JsonPath[];
  /** Index in the body's `messages`, or -1 for a top-level system prompt (never dropped). */
  message: number;
}

/** A provider request read into the engine's model. */
export interface ParsedRequest {
  format: FormatName;
  model: string | undefined;
  stream: boolean;
  /** The request's answer budget (`max_tokens`...), reserved by the context manager. */
  maxTokens: number | undefined;
  /** The conversation as chat messages, system prompt first when there is one. */
  messages: ChatMessage[];
  /** One origin per entry of `messages`. */
  origins: ChatOrigin[];
  /** The parsed body itself (speeds up splicing; never modified). */
  body: Record<string, unknown>;
}

/** Reads usage from a stream of server-sent events. */
export interface SseUsageReader {
  /** Feeds one event (`event:` name, `data:` text). */
  onEvent(event: string | undefined, data: string): void;
  /** Usage seen so far, undefined when the stream carried none. */
  usage(): ReportedUsage | undefined;
}

/** A tool svc offers the model (the retrieval tool), provider-neutral. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the tool's input. */
  schema: Record<string, unknown>;
}

/** A tool call the model made, read from a response. */
export interface ResponseToolCall {
  id: string;
  name: string;
  /** Parsed input (the chat format's `arguments` string is parsed; unparsable: the raw string). */
  input: unknown;
}

/**
 * One provider format as data plus small functions. The shared interpreter
 * (`parseRequest`, `spliceRequest`, the usage readers) applies it; adding a
 * provider means adding one of these.
 */
export interface ProviderFormat {
  name: FormatName;
  /** The path svc serves it on, e.g. `/v1/messages`. */
  path: string;
  /** Converts a parsed body to chat messages with their origins. Throws SvcError for a shape it cannot read. */
  toChat(body: Record<string, unknown>): Pick<ParsedRequest, 'messages' | 'origins'>;
  /** A message the engine inserted (a drop marker), in this format. */
  fromChat(message: ChatMessage): unknown;
  /** Path of the messages array in the body. */
  messagesPath: JsonPath;
  /**
   * User and assistant messages must alternate: an inserted message (a drop
   * marker) joins the neighbouring user message instead of standing alone.
   */
  alternatesRoles?: boolean;
  /** Usage from a complete JSON response body. */
  usageFromJson(body: unknown): ReportedUsage | undefined;
  /** A reader of usage from this provider's SSE stream. */
  createSseUsageReader(): SseUsageReader;
  /** The error shape svc answers in for this format (see `sendSvcError`). */
  errorShape: FormatName;
  /** The tool definition in this provider's `tools` array. */
  toolDefinition(tool: ToolSpec): unknown;
  /** Tool calls in a complete (non-streaming) JSON response. */
  toolCallsFromResponse(body: unknown): ResponseToolCall[];
  /**
   * Messages that continue a conversation after a response with tool calls:
   * the assistant turn as the provider returned it, then the results.
   */
  continuation(body: unknown, results: Array<{ id: string; content: string }>): unknown[];
}
