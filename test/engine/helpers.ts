import type { CompressContext } from '../../src/engine/compressors/types.js';

/** A fixed hash for markers in exact-output tests. */
export const HASH = 'abcdef0123456789abcdef01';

/** A compressor context with nothing earlier in the conversation. */
export function ctxOf(over: Partial<CompressContext> = {}): CompressContext {
  return {
    hash: HASH,
    userTerms: [],
    seen: new Set(),
    earlierLines: () => new Set(),
    earlierJson: () => new Set(),
    earlierEntities: () => new Map(),
    earlierLinkShapes: () => new Set(),
    ...over,
  };
}

/** Deterministic PRNG (mulberry32) for generated inputs. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
