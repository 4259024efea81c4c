import type { ShapeAdvice, ToinAdvice } from '../engine/context/types.js';
import type { ShapeRecord, ToinData } from './types.js';

/** Fewer events than this about a shape: no advice (neutral). */
export const MIN_EVIDENCE = 3;
/** A retrieval rate at or above this makes a shape fully important. */
export const FULL_RATE = 0.25;
/** After this many compressions/drops without one retrieval, a shape is at its least important. */
export const NEVER_RETRIEVED_AFTER = 20;

/**
 * Advice for one shape. Importance 0.5 is neutral; shapes that are retrieved
 * rise towards 1 with their retrieval rate (retrievals per compression or
 * drop; 25% or more gives 1); shapes never retrieved sink towards 0.2 as
 * evidence grows. keepFactor = 2^((importance - 0.5) * 2): from about 0.66
 * (compress harder) to 2 (keep twice as much).
 */
export function shapeAdvice(record: ShapeRecord): ShapeAdvice | undefined {
  const seen = record.compressed + record.dropped;
  if (seen + record.retrieved < MIN_EVIDENCE) return undefined;
  const importance =
    record.retrieved > 0
      ? 0.5 + 0.5 * Math.min(1, record.retrieved / Math.max(1, seen) / FULL_RATE)
      : 0.5 - 0.3 * Math.min(1, seen / NEVER_RETRIEVED_AFTER);
  const rounded = Math.round(importance * 1000) / 1000;
  return { importance: rounded, keepFactor: Math.round(2 ** ((rounded - 0.5) * 2) * 1000) / 1000 };
}

/** Advice for every shape with enough evidence, as the plain data the engine takes. */
export function adviceFrom(data: ToinData): ToinAdvice {
  const shapes: ToinAdvice['shapes'] = {};
  for (const [key, record] of Object.entries(data.shapes)) {
    const advice = shapeAdvice(record);
    if (advice) shapes[key] = advice;
  }
  return { shapes };
}
