import { lruOfEntries } from '../../lru.js';
import { parseMarkers } from '../markers.js';
import { contentText } from '../tokens.js';
import type { ChatMessage } from '../types.js';
import { toolNameFor, toolOutputShape } from './shape.js';
import type { ShapeObservation } from './types.js';

/** marker hash -> shape of the original it names; the hash already identifies the content. */
const shapeByHash = lruOfEntries<string, { key: string; tool: string; fields: string[] }>(20_000);

/**
 * The observation of a compressed message, with the original it was made
 * from: the router hands on the same objects each turn, so a message
 * observed before yields the same observation object (which TOIN's stores
 * then recognise and count once) without parsing its markers again.
 */
const observedAt = new WeakMap<
  ChatMessage,
  { original: ChatMessage; observation: ShapeObservation | undefined }
>();

/**
 * TOIN observations for tool outputs the per-message compressors changed:
 * one `compressed` event per output, with the CCR hashes its markers name.
 * Cost grows with the compressed texts only (shapes are memoized by hash).
 */
export function observeCompressed(
  originals: readonly ChatMessage[],
  current: readonly ChatMessage[],
  origin: readonly number[],
): ShapeObservation[] {
  const out: ShapeObservation[] = [];
  for (let k = 0; k < current.length; k++) {
    const message = current[k]!;
    const i = origin[k] ?? -1;
    const original = i >= 0 ? originals[i] : undefined;
    if (!original || message === original || message.role !== 'tool') continue;
    let known = observedAt.get(message);
    if (known?.original !== original) {
      known = { original, observation: observe(originals, i, message) };
      observedAt.set(message, known);
    }
    if (known.observation) out.push(known.observation);
  }
  return out;
}

function observe(
  originals: readonly ChatMessage[],
  i: number,
  message: ChatMessage,
): ShapeObservation | undefined {
  const hashes = [...new Set(parseMarkers(contentText(message.content)).map((m) => m.hash))];
  if (hashes.length === 0) return undefined;
  let shape = shapeByHash.get(hashes[0]!);
  if (!shape) {
    shape = toolOutputShape(toolNameFor(originals, i), contentText(originals[i]!.content));
    for (const h of hashes) shapeByHash.set(h, shape);
  }
  return { event: 'compressed', shape: shape.key, tool: shape.tool, fields: shape.fields, hashes };
}
