/**
 * Maps a compressed chat conversation back into a provider request without
 * loss. An adapter builds a *chat view* of its request: one chat message per
 * unit the engine understands, holding only the text-bearing parts, each with
 * the path of the provider node it came from. After compression, changed texts
 * are written back into copies of exactly those nodes; every other node
 * (images, documents, thinking blocks and their signatures, cache_control,
 * tool_use input, unknown fields) stays the same object, in the same place.
 *
 * Dropped messages (the service's context manager, only over the model's
 * budget) are recognised by their marker `[svc: N messages omitted ...]`: the
 * N view messages are removed from the request and the marker is inserted in
 * their place. If the result cannot be aligned with the view, `spliceResult`
 * returns null and the caller keeps the original request (fidelity first).
 */
import { Draft, type PathKey } from './draft.js';
import type { ChatMessage, ChatTextPart } from './types.js';

export type { PathKey } from './draft.js';

/** One text of the chat view: where it lives and how to write a new one there. */
export interface TextSlot {
  text: string;
  /** Path from the request root to the node that owns the text. */
  path: PathKey[];
  /** Returns a copy of `node` that holds `text`. */
  write: (node: unknown, text: string) => unknown;
}

/** One chat message of the view and the provider content it stands for. */
export interface ViewMessage {
  chat: ChatMessage;
  /** Its texts in the order of its content (a string content is one slot). */
  slots: TextSlot[];
  /** Index of the provider message in the messages array; -1 for none (a system param). */
  message: number;
  /** Indices of the content blocks it stands for, or `all` for the whole message. */
  blocks: number[] | 'all';
}

/** The chat view of one provider request. */
export interface ChatView {
  /** Path of the provider's messages array (`['messages']`, `['prompt']`). */
  messagesPath: PathKey[];
  messages: ViewMessage[];
  /** A provider message carrying a drop marker the service inserted. */
  markerMessage: (marker: ChatMessage) => unknown;
}

const DROP_MARKER_RE = /\[svc: (\d+) messages omitted/g;
// The service's marker format: `[svc: 87 items omitted (note); retrieve with svc_retrieve hash=3fa9...]`.
const ANY_MARKER_RE = /\[svc: \d+ \w+ omitted(?: \([^)\]\n]*\))?; retrieve with \w+ hash=[0-9a-f]+\]/g;
const MAX_ALIGN_STEPS = 100_000;

/** Chat content for a view's slots: a string when the source was one string. */
export function chatContentOf(slots: TextSlot[], asString: boolean): ChatMessage['content'] {
  if (asString) return slots[0]?.text ?? '';
  if (slots.length === 0) return '';
  return slots.map((s): ChatTextPart => ({ type: 'text', text: s.text }));
}

/** The texts of a chat message's content, in order. */
export function textsOf(content: ChatMessage['content']): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  const texts: string[] = [];
  for (const part of content) {
    if (part && part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
  }
  return texts;
}

function droppedCount(message: ChatMessage): number {
  let count = 0;
  for (const text of textsOf(message.content)) {
    for (const m of text.matchAll(DROP_MARKER_RE)) count += Number(m[1]);
  }
  return count;
}

function sameToolCalls(a: ChatMessage, b: ChatMessage): boolean {
  const x = a.tool_calls ?? [];
  const y = b.tool_calls ?? [];
  return x.length === y.length && x.every((call, i) => call.id === y[i]?.id);
}

/** The output texts for a view's slots, or null when the shapes differ. */
function outTexts(view: ViewMessage, out: ChatMessage): string[] | null {
  const texts = textsOf(out.content);
  if (texts.length === view.slots.length) return texts;
  // An empty content may come back as '', null or [] whatever we sent.
  if (texts.length === 0 && view.slots.every((s) => s.text === '')) return view.slots.map(() => '');
  if (view.slots.length === 0 && texts.length === 1 && texts[0] === '') return [];
  return null;
}

function matches(view: ViewMessage, out: ChatMessage): boolean {
  return (
    view.chat.role === out.role &&
    (view.chat.tool_call_id ?? null) === (out.tool_call_id ?? null) &&
    sameToolCalls(view.chat, out) &&
    outTexts(view, out) !== null
  );
}

type AlignOp =
  | { kind: 'keep'; view: number; out: ChatMessage }
  | { kind: 'drop'; from: number; count: number; marker: ChatMessage };

/** True when a message holds nothing but markers: the shape of a drop marker. */
function isMarkerOnly(message: ChatMessage): boolean {
  return textsOf(message.content).join('').replace(ANY_MARKER_RE, '').trim() === '';
}

/**
 * Aligns the service's messages with the view: each output message is either
 * a kept view message or a drop marker standing for the next N. Where both
 * readings fit, the likelier one is tried first (drop for a marker-only
 * message, keep for a message that merely mentions one) and the other on
 * backtracking. Null when nothing fits.
 */
function align(view: ViewMessage[], out: ChatMessage[]): AlignOp[] | null {
  const choices: Array<{ i: number; j: number; ops: number; alt: 'keep' | 'drop' }> = [];
  const ops: AlignOp[] = [];
  let i = 0;
  let j = 0;
  let forced: 'keep' | 'drop' | undefined;
  for (let steps = 0; steps < MAX_ALIGN_STEPS; steps++) {
    if (j === out.length && i === view.length) return ops;
    const o = out[j];
    const n = o ? droppedCount(o) : 0;
    const canDrop = n > 0 && i + n <= view.length && view.slice(i, i + n).every((v) => v.message >= 0);
    const canKeep = o !== undefined && i < view.length && matches(view[i]!, o);
    let take: 'keep' | 'drop' | undefined = forced;
    forced = undefined;
    if (take === undefined && canDrop && canKeep) {
      take = isMarkerOnly(o!) ? 'drop' : 'keep';
      choices.push({ i, j, ops: ops.length, alt: take === 'drop' ? 'keep' : 'drop' });
    } else if (take === undefined) {
      take = canDrop ? 'drop' : canKeep ? 'keep' : undefined;
    }
    if (take === 'drop') {
      ops.push({ kind: 'drop', from: i, count: n, marker: o! });
      i += n;
      j++;
    } else if (take === 'keep') {
      ops.push({ kind: 'keep', view: i, out: o! });
      i++;
      j++;
    } else {
      const choice = choices.pop();
      if (!choice) return null;
      ({ i, j } = choice);
      ops.length = choice.ops;
      forced = choice.alt;
    }
  }
  return null;
}

/** Writes the changed texts of one kept message. */
function writeTexts(draft: Draft, view: ViewMessage, out: ChatMessage): number {
  const texts = outTexts(view, out) ?? [];
  let changed = 0;
  view.slots.forEach((slot, k) => {
    const text = texts[k] ?? slot.text;
    if (text === slot.text) return;
    draft.update(slot.path, (node) => slot.write(node, text));
    changed++;
  });
  return changed;
}

/** Removes dropped messages and blocks, inserting each marker where its run began. */
function applyDrops(draft: Draft, chat: ChatView, drops: Array<Extract<AlignOp, { kind: 'drop' }>>): void {
  const dropped = new Set<number>();
  const markersBefore = new Map<number, unknown[]>();
  for (const drop of drops) {
    for (let v = drop.from; v < drop.from + drop.count; v++) dropped.add(v);
    const next = chat.messages[drop.from]!.message;
    markersBefore.set(next, [...(markersBefore.get(next) ?? []), chat.markerMessage(drop.marker)]);
  }
  const removeBlocks = new Map<number, Set<number> | 'all'>();
  const keptViews = new Map<number, number>();
  chat.messages.forEach((v, idx) => {
    if (!dropped.has(idx)) keptViews.set(v.message, (keptViews.get(v.message) ?? 0) + 1);
  });
  chat.messages.forEach((v, idx) => {
    if (!dropped.has(idx)) return;
    // A message none of whose views survive goes whole (its opaque blocks too).
    if (v.blocks === 'all' || !keptViews.has(v.message)) {
      removeBlocks.set(v.message, 'all');
      return;
    }
    const set = removeBlocks.get(v.message);
    if (set !== 'all') removeBlocks.set(v.message, new Set([...(set ?? []), ...v.blocks]));
  });
  draft.update(chat.messagesPath, (list) => {
    const result: unknown[] = [];
    (list as unknown[]).forEach((message, idx) => {
      result.push(...(markersBefore.get(idx) ?? []));
      const remove = removeBlocks.get(idx);
      if (remove === undefined) result.push(message);
      else if (remove !== 'all') {
        const m = message as { content: unknown[] };
        result.push({ ...m, content: m.content.filter((_, b) => !remove.has(b)) });
      }
    });
    return result;
  });
}

/**
 * Applies the service's messages to the request `root` through its view.
 * Returns the original `root` when nothing changed, a copy with only the
 * changed nodes replaced otherwise, or null when the result does not align.
 */
export function spliceResult<T>(root: T, chat: ChatView, out: ChatMessage[]): T | null {
  const ops = align(chat.messages, out);
  if (!ops) return null;
  const draft = new Draft(root);
  let changed = 0;
  const drops: Array<Extract<AlignOp, { kind: 'drop' }>> = [];
  for (const op of ops) {
    if (op.kind === 'keep') changed += writeTexts(draft, chat.messages[op.view]!, op.out);
    else drops.push(op);
  }
  if (drops.length > 0) applyDrops(draft, chat, drops);
  return changed === 0 && drops.length === 0 ? root : (draft.root as T);
}

/** The chat messages to send for a view. */
export function viewMessages(chat: ChatView): ChatMessage[] {
  return chat.messages.map((v) => v.chat);
}
