import type { ChatMessage, ContentPart, EngineOutput } from '../engine/types.js';
import { applyJsonEdits, detached, JsonEdits, type SpanHints, type WrittenSink } from '../json/spans.js';
import { InsertMerger } from './merge-inserted.js';
import type { ChatOrigin, ParsedRequest, ProviderFormat } from './types.js';

/** Why an engine output could not be written back (then the original is forwarded). */
export class UnspliceableError extends Error {
  override name = 'UnspliceableError';
}

function samePart(a: ContentPart, b: ContentPart): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

function writeContent(
  edits: JsonEdits,
  before: ChatMessage['content'],
  after: ChatMessage['content'],
  origin: ChatOrigin,
  at: number,
): void {
  if (before === after) return;
  if (typeof before === 'string' && typeof after === 'string' && before === after) return;
  const fail: (why: string) => never = (why) => {
    throw new UnspliceableError(`message ${at}: ${why}`);
  };
  if (origin.text) {
    if (typeof after !== 'string') fail('string content became non-string');
    edits.set(origin.text, after);
    return;
  }
  const parts = origin.parts;
  const old = Array.isArray(before) ? before : [];
  if (!parts) fail('content the body cannot hold changed');
  if (typeof after === 'string') {
    const texts = old.flatMap((p, k) => (p.type === 'text' ? [k] : []));
    if (texts.length !== 1) fail('parts became one string');
    if ((old[texts[0]!] as { text: string }).text !== after) edits.set([...parts[texts[0]!]!, 'text'], after);
    return;
  }
  if (after === null && old.length === 0) return;
  if (!Array.isArray(after) || after.length !== old.length) fail('the number of parts changed');
  for (let k = 0; k < after.length; k++) {
    const part = after[k]!;
    const was = old[k]!;
    if (was.type === 'text' && part.type === 'text') {
      if (typeof part.text !== 'string') fail(`part ${k} lost its text`);
      if (part.text !== was.text) edits.set([...parts[k]!, 'text'], part.text);
    } else if (!samePart(was, part)) fail(`non-text part ${k} changed`);
  }
}

/**
 * The new JSON text of body messages whose content the engine changed, by
 * the parsed message object, with the output messages it was written from.
 * The proxy's parser hands on the same objects for the part of a
 * conversation it has seen, and the engine the same output objects for
 * them, so an earlier message compressed on an earlier turn is written back
 * as one piece of text instead of being serialized and spliced again (principle 4).
 */
const writtenAt = new WeakMap<object, { outs: ChatMessage[]; json: string }>();

/** The kept output messages of body message `m`s chat messages, or undefined when one was dropped. */
function keptOutputs(
  members: readonly number[],
  outOf: ReadonlyMap<number, ChatMessage>,
): ChatMessage[] | undefined {
  const outs: ChatMessage[] = [];
  for (const i of members) {
    const out = outOf.get(i);
    if (!out) return undefined;
    outs.push(out);
  }
  return outs;
}

/** An output message's origin: an input message's index, or negative for one the engine inserted. */
function isInserted(origin: number): boolean {
  return origin < 0;
}

function isKept(origin: number): boolean {
  return origin >= 0;
}

/** Remembers the text a body message was written as, with the output messages it was written from. */
class WrittenMessage implements WrittenSink {
  constructor(
    private readonly body: object,
    private readonly outs: ChatMessage[],
  ) {}

  written(json: string): void {
    writtenAt.set(this.body, { outs: this.outs, json: detached(json) });
  }
}

/** Body messages next to an inserted message: the role merger may add to them, so they are written the plain way. */
function besideInserted(parsed: ParsedRequest, output: EngineOutput): Set<number> {
  const near = new Set<number>();
  const origin = output.messageOrigin;
  origin.forEach((o, j) => {
    if (o >= 0) return;
    for (const step of [-1, 1]) {
      let k = j + step;
      while (k >= 0 && k < origin.length && origin[k]! < 0) k += step;
      const at = origin[k];
      if (at !== undefined && at >= 0) near.add(parsed.origins[at]!.message);
    }
  });
  return near;
}

/** Writes the changed content of every kept message (from memo where it was written before). */
function writeMessages(
  edits: JsonEdits,
  format: ProviderFormat,
  parsed: ParsedRequest,
  output: EngineOutput,
  outOf: ReadonlyMap<number, ChatMessage>,
  perMessage: ReadonlyMap<number, number[]>,
): void {
  const list = messagesList(format, parsed.body);
  const near = output.messageOrigin.some(isInserted) ? besideInserted(parsed, output) : undefined;
  for (const [m, members] of perMessage) {
    let changed = false;
    for (const i of members) {
      const out = outOf.get(i);
      if (out !== undefined && out.content !== parsed.messages[i]!.content) {
        changed = true;
        break;
      }
    }
    if (!changed) continue;
    const outs = keptOutputs(members, outOf);
    const raw = m >= 0 && outs && !near?.has(m) && Array.isArray(list) ? (list[m] as unknown) : undefined;
    const body = typeof raw === 'object' && raw !== null ? raw : undefined;
    const path = [...format.messagesPath, m];
    const known = body ? writtenAt.get(body) : undefined;
    if (known && outs && known.outs.length === outs.length && known.outs.every((o, k) => o === outs[k])) {
      edits.setJson(path, known.json);
      continue;
    }
    const before = edits.size;
    for (const i of members) {
      const out = outOf.get(i);
      if (out) writeContent(edits, parsed.messages[i]!.content, out.content, parsed.origins[i]!, i);
    }
    if (body && outs && edits.size > before) edits.capture(path, new WrittenMessage(body, outs));
  }
}

/**
 * Writes an engine output back into the ORIGINAL body text: only the text of
 * compressed blocks changes, dropped messages (or blocks) leave, inserted
 * markers are added; every other byte stays. Returns undefined when nothing
 * changed (then forward the original bytes). Throws UnspliceableError when
 * the output does not fit the body (caller fails open).
 */
export function spliceRequest(
  format: ProviderFormat,
  text: string,
  parsed: ParsedRequest,
  output: EngineOutput,
  hints?: SpanHints,
): string | undefined {
  const edits = new JsonEdits();
  const outMessages = output.result.messages;
  const origin = output.messageOrigin;
  if (origin.length !== outMessages.length)
    throw new UnspliceableError('messageOrigin does not match messages');
  /** Output message per kept input message. */
  const outOf = new Map<number, ChatMessage>();
  // loops, not callbacks made per request: see engine/compressors/json-walk.ts on closures
  for (let j = 0; j < outMessages.length; j++) {
    const o = origin[j]!;
    if (o < 0) continue;
    if (!parsed.messages[o] || outOf.has(o)) throw new UnspliceableError(`output ${j} has a bad origin ${o}`);
    outOf.set(o, outMessages[j]!);
  }
  const perMessage = new Map<number, number[]>();
  let bodyCount = 0;
  for (let i = 0; i < parsed.origins.length; i++) {
    const m = parsed.origins[i]!.message;
    const list = perMessage.get(m) ?? [];
    list.push(i);
    perMessage.set(m, list);
    bodyCount = Math.max(bodyCount, m + 1);
  }
  writeMessages(edits, format, parsed, output, outOf, perMessage);
  // Drops: a body message leaves whole when all its chat messages left, else block by block.
  for (const [m, members] of perMessage) {
    const gone: number[] = [];
    for (const i of members) if (!outOf.has(i)) gone.push(i);
    if (gone.length === 0) continue;
    if (m < 0) throw new UnspliceableError('the system prompt was dropped');
    if (gone.length === members.length) edits.remove([...format.messagesPath, m]);
    else for (const i of gone) for (const path of parsed.origins[i]!.owns) edits.remove(path);
  }
  // Inserted messages go before the body message of the next kept one.
  const merger = format.alternatesRoles ? new InsertMerger(format, parsed, output) : undefined;
  for (let j = 0; j < outMessages.length; j++) {
    if (origin[j]! >= 0) continue;
    if (merger?.merge(edits, j)) continue;
    const next = origin.slice(j + 1).find(isKept);
    const before = next === undefined ? bodyCount : Math.max(0, parsed.origins[next]!.message);
    edits.insert(format.messagesPath, before, format.fromChat(outMessages[j]!));
  }
  merger?.flush(edits);
  if (edits.size === 0) return undefined;
  return applyJsonEdits(text, edits, parsed.body, hints);
}

/** The value at a body's `messagesPath` (its messages array), or undefined. */
export function messagesList(format: ProviderFormat, body: unknown): unknown {
  return format.messagesPath.reduce<unknown>(
    (v, key) =>
      typeof v === 'object' && v !== null ? (v as Record<string | number, unknown>)[key] : undefined,
    body,
  );
}
