import { hash } from 'node:crypto';
import type { ChatMessage, Tokenizer } from '../engine/types.js';

/**
 * The prefix shape of a request (the input of the cache-aware estimate,
 * src/stats/cache-aware.ts): one hash per segment (tools, then each message)
 * and cumulative token counts. Shared by the accounting on the main thread
 * and the large-body worker, which computes it for the bodies the main
 * thread never parses: so this module imports nothing but `node:crypto`.
 */

/** One request's prefix: a hash per segment and the tokens up to and including it. */
export interface PrefixShape {
  hashes: number[];
  /** Cumulative tokens, `cumulative[i]` = tokens of segments 0..i. */
  cumulative: number[];
}

/** What the accounting needs of a request: its prefix shape, its model and its first two messages' hashes. */
export interface RequestShape extends PrefixShape {
  model: string;
  /** Hashes of the first two messages (system, first message): the conversation's identity. */
  first: number[];
}

/** A segment's hash: the first 48 bits of the sha1 of its JSON (an exact integer in a double). */
export function segmentHash(value: unknown): number {
  return textHash(JSON.stringify(value) ?? 'null');
}

function textHash(json: string): number {
  return hash('sha1', json, 'buffer').readUIntBE(0, 6);
}

/**
 * The JSON text of each tool list and its hash, by the parsed array (never
 * modified; the body parser gives a conversation's tool list again as the
 * same array while its text is the same).
 */
const toolTexts = new WeakMap<unknown[], string>();
const toolHashes = new WeakMap<unknown[], number>();

/**
 * `JSON.stringify(tools)`, once per parsed array: the accounting (hash and
 * count), the stats' token count and the retrieval tool's count each need
 * it, and a coding agent's tool list is tens of KB on every request.
 */
export function toolsJson(tools: unknown[]): string {
  let json = toolTexts.get(tools);
  if (json === undefined) {
    json = JSON.stringify(tools);
    toolTexts.set(tools, json);
  }
  return json;
}

/** Each message's hash, memoized per message object (a re-sent conversation reuses its objects). */
const messageHashes = new WeakMap<object, number>();

export function hashOf(message: ChatMessage): number {
  let h = messageHashes.get(message);
  if (h === undefined) {
    h = segmentHash(message);
    messageHashes.set(message, h);
  }
  return h;
}

/**
 * Hashes `messages` as `prefixShape` does, a message at a time, awaiting
 * what `pause` returns between them: the accounting after a response lets
 * requests that arrive meanwhile go first (src/quiet.ts).
 */
export async function hashAhead(
  messages: readonly ChatMessage[],
  pause: () => Promise<void> | undefined,
): Promise<void> {
  for (const m of messages) {
    hashOf(m);
    const p = pause();
    if (p) await p;
  }
}

/**
 * The prefix shape of a request: its tool definitions, then each message
 * (system first), with cumulative token counts as the proxy counts whole
 * requests (tools as their JSON text, messages with `countMessages`).
 */
export function prefixShape(
  tokenizer: Tokenizer,
  tools: unknown[] | undefined,
  messages: ChatMessage[],
): PrefixShape {
  const hashes: number[] = [];
  const cumulative: number[] = [];
  let total = 0;
  if (tools && tools.length > 0) {
    const json = toolsJson(tools);
    let hash = toolHashes.get(tools);
    if (hash === undefined) {
      hash = textHash(json);
      toolHashes.set(tools, hash);
    }
    hashes.push(hash);
    total += tokenizer.countText(json);
    cumulative.push(total);
  }
  const priming = tokenizer.countMessages([]);
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    hashes.push(hashOf(m));
    total += tokenizer.countMessages([m]) - priming + (i === 0 ? priming : 0);
    cumulative.push(total);
  }
  return { hashes, cumulative };
}

/** The tool definitions of a parsed body, when it has a list of them. */
export function toolsOf(body: Record<string, unknown>): unknown[] | undefined {
  return Array.isArray(body.tools) ? (body.tools as unknown[]) : undefined;
}

/** Shapes by the parsed request they were computed for, with the encoding they were counted in. */
const shapes = new WeakMap<object, { encoding: string; shape: RequestShape }>();

/**
 * The shape of a parsed request (`tokenizerFor` of the engine, loaded by the
 * caller); the same one again for the same parsed request (the same body
 * sent again reads as the same object: `parseRequest`). Never modified.
 */
export function requestShape(
  tokenizerFor: (model: string) => Tokenizer,
  parsed: { model?: string | undefined; body: Record<string, unknown>; messages: ChatMessage[] },
): RequestShape {
  const model = parsed.model ?? 'unknown';
  const tokenizer = tokenizerFor(model);
  const known = shapes.get(parsed);
  if (known?.encoding === tokenizer.encoding && known.shape.model === model) return known.shape;
  const shape = prefixShape(tokenizer, toolsOf(parsed.body), parsed.messages);
  const out = { ...shape, model, first: parsed.messages.slice(0, 2).map(hashOf) };
  shapes.set(parsed, { encoding: tokenizer.encoding, shape: out });
  return out;
}
