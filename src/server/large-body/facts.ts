import type { BodyFacts } from './types.js';

/** True when the body will be compressed, so the worker keeps it until `compress` (or `release`). */
export function keeps(facts: BodyFacts): boolean {
  return !facts.skipCompression && facts.messages > 0;
}
