import { LRUCache } from 'lru-cache';
import { parseMarkers } from '../markers.js';
import { contentText } from '../tokens.js';
import type { ChatMessage } from '../types.js';
import { toolNameFor, toolOutputShape } from './shape.js';
import type { ShapeObservation } from './types.js';

/** marker hash -> shape of the original it names; the hash already identifies the content. */
const shapeByHash = new LRUCache<string, { key: string; tool: string; fields: string[] }>({ max: 20_000 });

/** CCR hashes named by the markers of a compressed message (the router hands on the same object each turn). */
const markerHashes = new WeakMap<ChatMessage, string[]>();

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
  current.forEach((message, k) => {
    const i = origin[k] ?? -1;
    const original = i >= 0 ? originals[i] : undefined;
    if (!original || message === original || message.role !== 'tool') return;
    let hashes = markerHashes.get(message);
    if (!hashes) {
      hashes = [...new Set(parseMarkers(contentText(message.content)).map((m) => m.hash))];
      markerHashes.set(message, hashes);
    }
    if (hashes.length === 0) return;
    let shape = shapeByHash.get(hashes[0]!);
    if (!shape) {
      shape = toolOutputShape(toolNameFor(originals, i), contentText(original.content));
      for (const h of hashes) shapeByHash.set(h, shape);
    }
    out.push({ event: 'compressed', shape: shape.key, tool: shape.tool, fields: shape.fields, hashes });
  });
  return out;
}
