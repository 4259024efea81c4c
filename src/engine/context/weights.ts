import { SvcError } from '../../errors.js';
import type { ScoreFactor, ScoreWeights } from './types.js';

/**
 * Default weights of the scoring factors. TOIN counts half until it has
 * learned something: its neutral 0.5 then shifts every unit alike.
 */
export const DEFAULT_SCORE_WEIGHTS: Readonly<ScoreWeights> = {
  recency: 1,
  similarity: 1,
  toin: 0.5,
  errors: 1,
  references: 1,
};

export const SCORE_FACTORS = Object.keys(DEFAULT_SCORE_WEIGHTS) as ScoreFactor[];

/**
 * Parses `recency=1,similarity=2,toin=0` into weights (missing names keep
 * their default). Throws SVC_BAD_CONFIG naming the bad entry.
 */
export function parseScoreWeights(text: string | undefined): ScoreWeights {
  const weights: ScoreWeights = { ...DEFAULT_SCORE_WEIGHTS };
  if (!text?.trim()) return weights;
  for (const entry of text.split(',')) {
    if (!entry.trim()) continue;
    const [name, value, extra] = entry.split('=').map((s) => s.trim());
    if (!name || value === undefined || extra !== undefined || !(SCORE_FACTORS as string[]).includes(name)) {
      throw new SvcError(
        'SVC_BAD_CONFIG',
        `--score-weights: "${entry.trim()}" is not NAME=NUMBER with NAME one of ${SCORE_FACTORS.join(', ')}`,
      );
    }
    const n = Number(value);
    if (value === '' || !Number.isFinite(n) || n < 0) {
      throw new SvcError(
        'SVC_BAD_CONFIG',
        `--score-weights: weight of ${name} must be a number >= 0, got "${value}"`,
      );
    }
    weights[name as ScoreFactor] = n;
  }
  if (SCORE_FACTORS.every((f) => weights[f] === 0)) {
    throw new SvcError('SVC_BAD_CONFIG', '--score-weights: at least one weight must be above 0');
  }
  return weights;
}

/** Fills missing weights with defaults. */
export function resolveWeights(partial: Partial<Record<string, number>> | undefined): ScoreWeights {
  const weights: ScoreWeights = { ...DEFAULT_SCORE_WEIGHTS };
  for (const f of SCORE_FACTORS) {
    const w = partial?.[f];
    if (typeof w === 'number' && Number.isFinite(w) && w >= 0) weights[f] = w;
  }
  return weights;
}
