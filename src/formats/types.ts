import type { ChatMessage } from '../engine/types.js';
import type { ReportedUsage } from '../events.js';
import type { JsonPath } from '../json/spans.js';
import type { FormatName } from './names.js';

export type { FormatName } from './names.js';

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
  /**
   * The provider's token-counting path, which takes the same body as `path`
   * (e.g. `/v1/messages/count_tokens`): svc compresses it as it would the
   * request and forwards it, so the count a client gets is the count of what
   * it will be billed for.
   */
  tokenCountPath?: string;
  /** Converts a parsed body to chat messages with their origins. Throws SvcError for a shape it cannot read. */
  toChat(body: Record<string, unknown>): Pick<ParsedRequest, 'messages' | 'origins'>;
  /**
   * Where a body shows it is in this format (`messages[3].content[0]
   * (tool_use)`), for telling formats apart when the client does not say
   * (`svc compress --input-format auto`); undefined when nothing does.
   */
  signal(
    messages: readonly unknown[],
    body: Record<string, unknown> | undefined,
    prefix: string,
  ): string | undefined;
  /**
   * The first shape problem of a body's messages (and its other fields) as
   * `path: what is wrong`, or undefined. Stricter than `toChat`, in words a
   * person can act on (`svc compress` reports it); `prefix` starts each path.
   */
  checkShape(
    messages: readonly unknown[],
    body: Record<string, unknown> | undefined,
    prefix: string,
  ): string | undefined;
  /** A message the engine inserted (a drop marker), in this format. */
  fromChat(message: ChatMessage): unknown;
  /** Path of the messages array in the body. */
  messagesPath: JsonPath;
  /**
   * User and assistant messages must alternate: an inserted message (a drop
   * marker) joins the neighbouring user message instead of standing alone.
   */
  alternatesRoles?: boolean;
  /**
   * The request's answer budget, when this format names it other than
   * `max_completion_tokens` / `max_tokens` (the default reading).
   */
  maxTokens?(body: Record<string, unknown>): number | undefined;
  /** Usage from a complete JSON response body. */
  usageFromJson(body: unknown): ReportedUsage | undefined;
  /** A reader of usage from this provider's SSE stream. */
  createSseUsageReader(): SseUsageReader;
  /** The upstream base URL (up to and including `/v1`) requests in this format go to. */
  upstreamUrl(urls: UpstreamUrls): string;
  /**
   * For `/v1` paths svc does not parse (token counting, models, batches...):
   * true when this format's upstream takes the request. The first format
   * that claims it wins; unclaimed requests go to `DEFAULT_FORMAT`'s.
   */
  claimsPassthrough?(path: string, headers: Readonly<Record<string, string | string[] | undefined>>): boolean;
  /** An error body in this provider's shape (svc's own errors: 402, 429, 4xx, 5xx). */
  errorBody(type: string, message: string, extra: Record<string, unknown>): unknown;
  /** The provider's error type for an HTTP status (`invalid_request_error`...). */
  errorType(status: number): string;
  /** Fields this shape adds to an svc error (the chat shape's `code` and `param`). */
  svcErrorFields(err: SvcErrorLike): Record<string, unknown>;
  /** The tool definition in this provider's `tools` array. */
  toolDefinition(tool: ToolSpec): unknown;
  /** Tool calls in a complete (non-streaming) JSON response. */
  toolCallsFromResponse(body: unknown): ResponseToolCall[];
  /**
   * Messages that continue a conversation after a response with tool calls:
   * the assistant turn as the provider returned it, then the results.
   */
  continuation(body: unknown, results: Array<{ id: string; content: string }>): unknown[];
  /**
   * The calls of svc's own tool `toolName` in a complete JSON response, and
   * the assistant turn to append before answering them (the model's turn
   * with only those calls: calls of the client's tools are left out).
   */
  ownToolCalls(body: Record<string, unknown>, toolName: string): OwnToolCalls;
  /** A final response with the calls of `toolName` taken out (the client never sees a tool it did not offer). */
  withoutOwnToolCalls(body: Record<string, unknown>, toolName: string): Record<string, unknown>;
  /** The messages that carry answers to tool calls, appended after the assistant turn. */
  toolResults(answers: readonly ToolAnswer[]): unknown[];
  /** How a stream ends: its final event, an error event, or ordinary data. */
  classifySseEvent(event: { event?: string | undefined; data: string }): SseEventKind;
  /** A relay of one streamed response that hides the rounds calling `toolName` (the retrieval loop). */
  createStreamRelay(toolName: string): StreamRelay;
}

/** The upstream base URLs of the configuration. */
export interface UpstreamUrls {
  messagesApiUrl: string;
  compatApiUrl: string;
}

/** What an error body needs of an svc error. */
export interface SvcErrorLike {
  code: string;
  status: number;
  message: string;
  details?: Record<string, unknown> | undefined;
}

/** A call of a tool svc offers itself (the retrieval tool). */
export interface OwnToolCall {
  id: string;
  input: Record<string, unknown>;
}

/** What a response asked of svc's own tool. */
export interface OwnToolCalls {
  calls: OwnToolCall[];
  /**
   * The model's turn to append before the answers (only meaningful when
   * `calls` is not empty): one message, or several list entries for a format
   * whose turn is several items.
   */
  assistant: AssistantTurn;
}

/** The model's turn as the list of a body holds it: one message, or several entries. */
export type AssistantTurn = Record<string, unknown> | Array<Record<string, unknown>>;

/** svc's answer to one call of its tool. */
export interface ToolAnswer {
  id: string;
  text: string;
  error: boolean;
}

/** What one server-sent event is to a cache: the end of a clean stream, a failure, or data. */
export type SseEventKind = 'final' | 'error' | 'data';

/** One server-sent event: its raw text (relayed as is) and its fields. */
export interface SseEvent {
  raw: string;
  event: string | undefined;
  data: string;
}

/** What one streamed round of the model asked of svc's tool. */
export interface RoundResult {
  calls: OwnToolCall[];
  /** The model's turn to append before the answers (only when `calls` is not empty). */
  assistant: AssistantTurn;
}

/**
 * Relays the rounds of one streamed response to the client as one answer:
 * text and thinking go out as they arrive; tool calls are held until the
 * round ends. A round that called svc's tool is not shown (its calls are
 * answered and the conversation continues upstream); the last round is,
 * with those calls taken out.
 */
export interface StreamRelay {
  round(
    events: AsyncIterable<SseEvent>,
    last: boolean,
    write: (text: string) => Promise<void>,
  ): Promise<RoundResult>;
}
