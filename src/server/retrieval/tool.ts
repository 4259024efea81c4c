import { retrieve } from '../../ccr/retrieve.js';
import { RETRIEVE_TOOL_NAME } from '../../engine/markers.js';
import { isSvcError } from '../../errors.js';
import {
  type AssistantTurn,
  messagesList,
  type ProviderFormat,
  type ToolAnswer,
} from '../../formats/index.js';
import {
  applyJsonEdits,
  arrayItemSpans,
  JsonEdits,
  memberSpans,
  objectMemberSpans,
  type Span,
  type SpanHints,
} from '../../json/spans.js';
import type { ServerContext } from '../context.js';

/** Rounds of retrieval the proxy answers for one request before it lets the model's answer through. */
export const MAX_RETRIEVAL_ROUNDS = 3;

const DESCRIPTION =
  'Retrieves content that was removed from this conversation to save space. Each marker such as ' +
  '"[svc: 12 messages omitted (...); retrieve with svc_retrieve hash=...]" names a hash: call this tool with it ' +
  'to get the original back. Add a query (words, "quoted phrases", field=value) to get only the matching items or lines.';

const SCHEMA = {
  type: 'object',
  properties: {
    hash: { type: 'string', description: 'the 24 hex digits after hash= in the marker' },
    query: { type: 'string', description: 'optional: return only the items or lines matching these terms' },
  },
  required: ['hash'],
};

/** The retrieval tool in a provider's tool format; the same bytes on every request (stable prefix). */
export function retrievalTool(format: ProviderFormat): unknown {
  return format.toolDefinition({ name: RETRIEVE_TOOL_NAME, description: DESCRIPTION, schema: SCHEMA });
}

function toolName(tool: unknown): string | undefined {
  if (typeof tool !== 'object' || tool === null) return undefined;
  const t = tool as { name?: unknown; function?: { name?: unknown } };
  return typeof t.name === 'string'
    ? t.name
    : typeof t.function?.name === 'string'
      ? t.function.name
      : undefined;
}

/**
 * Whether the proxy offers the retrieval tool on a request (principle 2: a
 * conversation's `tools` never change from one request to the next, and
 * they come first in the provider's cache order).
 *
 * - A body with a `tools` array gets `svc_retrieve` on every request, from
 *   the first on, marker or not: clients send the same tools each turn, so
 *   the tools stay byte-identical for the whole conversation, including the
 *   turn where the first marker appears.
 * - A body without tools never gets a tools member for the markers of
 *   per-message compression (that would rewrite the whole cached prefix the
 *   moment the first one appears); only a request the context manager cut
 *   (`contextCut`: over the model's context budget, where the prefix is
 *   rewritten anyway) and that holds a marker gets one.
 */
export function offersRetrieval(
  body: Record<string, unknown>,
  contextCut: boolean,
  marked: () => boolean,
): boolean {
  if (Array.isArray(body.tools)) return true;
  return contextCut && marked();
}

/** True when the engine's transforms show the context manager cut the request (dropped or compressed harder). */
export function contextCutIn(transforms: readonly string[] | undefined): boolean {
  return (transforms ?? []).some(
    (t) => t.startsWith('context:drop:') || t.startsWith('context:compress_harder:'),
  );
}

/** A change of a body text: the characters `start..end` become `insert`. */
export interface TextEdit {
  start: number;
  end: number;
  insert: string;
}

/**
 * Adds the retrieval tool at the end of the body's `tools` (creating it when
 * missing); every other byte of the body stays, whitespace included.
 * Unchanged when it is there.
 */
export function addRetrievalTool(
  text: string,
  body: Record<string, unknown>,
  format: ProviderFormat,
  toolsAt?: Span,
): string {
  const edit = retrievalToolEdit(text, body, format, toolsAt);
  return edit ? text.slice(0, edit.start) + edit.insert + text.slice(edit.end) : text;
}

/** The edit `addRetrievalTool` makes; undefined when the body offers the tool already. */
export function retrievalToolEdit(
  text: string,
  body: Record<string, unknown>,
  format: ProviderFormat,
  toolsAt?: Span,
): TextEdit | undefined {
  const tool = JSON.stringify(retrievalTool(format));
  const tools = body.tools;
  if (Array.isArray(tools) && tools.some((t) => toolName(t) === RETRIEVE_TOOL_NAME)) return undefined;
  const close = text.lastIndexOf('}');
  const appendMember: TextEdit = { start: close, end: close, insert: `,"tools":[${tool}]` };
  // `text` has the top-level members of `body` (only messages and system are ever rewritten):
  // without a tools member there is nothing to find, and scanning the whole body would cost a pass.
  if (!Object.hasOwn(body, 'tools')) return appendMember;
  if (toolsAt && text.charCodeAt(toolsAt.start) === 0x5b && text.charCodeAt(toolsAt.end - 1) === 0x5d) {
    let at = toolsAt.end - 1;
    while (at > toolsAt.start && /\s/.test(text[at - 1]!)) at--;
    const empty = at === toolsAt.start + 1;
    return { start: at, end: at, insert: `${empty ? '' : ','}${tool}` };
  }
  const open = text.indexOf('{');
  const member = objectMemberSpans(text, open).find((m) => m.key === 'tools');
  if (member && text[member.value.start] === '[') {
    const items = arrayItemSpans(text, member.value.start);
    const at = items.length > 0 ? items[items.length - 1]!.end : member.value.start + 1;
    return { start: at, end: at, insert: `${items.length > 0 ? ',' : ''}${tool}` };
  }
  if (member) return { start: member.value.start, end: member.value.end, insert: `[${tool}]` };
  return appendMember;
}

/**
 * The UTF-8 bytes of `text` after `edit`, given `bytes`, the UTF-8 bytes of
 * `text`: the unchanged parts are copied, not encoded again, and the offsets
 * are measured from the nearer end (the tools member is near one of them).
 */
export function editBytes(text: string, bytes: Buffer, edit: TextEdit): Buffer {
  const at = (i: number) =>
    i <= text.length / 2
      ? Buffer.byteLength(text.slice(0, i))
      : bytes.length - Buffer.byteLength(text.slice(i));
  return Buffer.concat([
    bytes.subarray(0, at(edit.start)),
    Buffer.from(edit.insert),
    bytes.subarray(at(edit.end)),
  ]);
}

/**
 * Where the `tools` array of the original body `original` sits in `text`,
 * the body after splicing, without scanning it: splicing edits only the
 * messages member (`listKey`, the format's list: `messages`, `input`), so a
 * member before it keeps its place and one after it moves by the change in
 * length. Checked (the text outside the messages member must be unchanged);
 * undefined when that does not hold.
 */
export function toolsSpanAfterSplice(
  original: string,
  body: Record<string, unknown>,
  hints: SpanHints | undefined,
  text: string,
  listKey = 'messages',
): Span | undefined {
  if (!Object.hasOwn(body, 'tools')) return undefined;
  const members = memberSpans(original, body, hints);
  const tools = members?.get('tools');
  const messages = members?.get(listKey);
  if (!tools || !messages) return undefined;
  const shift = text.length - original.length;
  if (text === original) return tools;
  const tailLength = original.length - messages.end;
  if (
    text.slice(0, messages.start) !== original.slice(0, messages.start) ||
    text.slice(text.length - tailLength) !== original.slice(messages.end)
  )
    return undefined;
  if (tools.end <= messages.start) return tools;
  if (tools.start >= messages.end) return { start: tools.start + shift, end: tools.end + shift };
  return undefined;
}

/** One call of the retrieval tool made by the model. */
export interface RetrievalCall {
  id: string;
  input: { hash?: unknown; query?: unknown };
}

/** The tool's answer to one call. */
export type RetrievalAnswer = ToolAnswer;

/** Answers calls from the CCR store; each one emits a `retrieved` event (TOIN, stats). */
export async function answerCalls(
  ctx: ServerContext,
  calls: readonly RetrievalCall[],
): Promise<RetrievalAnswer[]> {
  const answers: RetrievalAnswer[] = [];
  for (const call of calls) {
    const hash = typeof call.input.hash === 'string' ? call.input.hash.trim() : '';
    const query =
      typeof call.input.query === 'string' && call.input.query.trim() ? call.input.query : undefined;
    const time = new Date(ctx.now());
    try {
      const r = await retrieve(ctx.ccr, hash, query, ctx.config.ccrTtl);
      ctx.bus.emit('retrieved', { time, hash, query, found: true, via: 'tool' });
      const empty = r.match && r.match.matched === 0;
      const text = empty
        ? `Nothing in ${hash} matches the query "${query}" (${r.match!.total} ${r.match!.unit}); call again without a query for the whole content.`
        : r.content;
      answers.push({ id: call.id, text, error: false });
    } catch (err) {
      if (!isSvcError(err)) throw err;
      ctx.bus.emit('retrieved', { time, hash, query, found: false, via: 'tool' });
      answers.push({ id: call.id, text: err.message, error: true });
    }
  }
  return answers;
}

/**
 * Appends the model's retrieval turn and the tool's answers to the request
 * body (at the end of `messages`; every earlier byte stays, so the
 * provider's prompt cache still covers the prefix).
 */
export function appendRetrievalTurn(
  text: string,
  format: ProviderFormat,
  assistant: AssistantTurn,
  answers: readonly RetrievalAnswer[],
): string {
  const body = JSON.parse(text) as unknown;
  const list = messagesList(format, body);
  const count = Array.isArray(list) ? list.length : 0;
  const edits = new JsonEdits();
  const turn = Array.isArray(assistant) ? assistant : [assistant];
  for (const message of [...turn, ...format.toolResults(answers)])
    edits.insert(format.messagesPath, count, message);
  return applyJsonEdits(text, edits);
}
