import { contentText } from '../tokens.js';
import type { ChatMessage } from '../types.js';
import {
  errorFactor,
  recencyFactor,
  referenceFactor,
  salientTokens,
  similarityFactor,
  toinFactor,
} from './factors.js';
import { messageText } from './text.js';
import type { ContextUnit, ScoreFactor, ScoreWeights, ToinAdvice } from './types.js';
import { SCORE_FACTORS } from './weights.js';

/** Per-factor values and the weighted score of one unit. */
export interface UnitScore {
  unit: ContextUnit;
  factors: Record<ScoreFactor, number>;
  score: number;
}

export interface ScoreOptions {
  intelligent: boolean;
  weights: ScoreWeights;
  toin?: ToinAdvice | undefined;
}

/**
 * The query for similarity: the latest user message's text; when it has
 * none (a tool-result-only turn), the latest message that has text.
 */
export function latestUserText(messages: readonly ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const m = messages[i]!;
    if (m.role === 'user') {
      const text = contentText(m.content);
      if (text.trim()) return text;
    }
  }
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const text = contentText(messages[i]!.content);
    if (text.trim()) return text;
  }
  return '';
}

/**
 * Scores candidate units. With `intelligent` off, the score is the unit's
 * position alone (oldest lowest). Otherwise the weighted mean of recency,
 * similarity to the latest user turn, TOIN importance, error indicators and
 * forward references.
 */
export function scoreUnits(
  messages: readonly ChatMessage[],
  candidates: readonly ContextUnit[],
  options: ScoreOptions,
): UnitScore[] {
  const recency = recencyFactor(candidates);
  if (!options.intelligent) {
    return candidates.map((unit, i) => ({
      unit,
      factors: { recency: recency[i]!, similarity: 0, toin: 0.5, errors: 0, references: 0 },
      score: recency[i]!,
    }));
  }
  const texts = messages.map(messageText);
  const unitTexts = candidates.map((u) => texts.slice(u.start, u.end).join('\n'));
  const similarity = similarityFactor(unitTexts, latestUserText(messages));
  const references = referenceFactor(candidates, texts.map(salientTokens));
  const totalWeight = SCORE_FACTORS.reduce((sum, f) => sum + options.weights[f], 0) || 1;
  return candidates.map((unit, i) => {
    let flagged = 0;
    for (let k = unit.start; k < unit.end; k += 1) if (messages[k]!.is_error === true) flagged += 1;
    const factors: Record<ScoreFactor, number> = {
      recency: recency[i]!,
      similarity: similarity[i]!,
      toin: toinFactor(messages, unit, options.toin),
      errors: errorFactor(unitTexts[i]!, flagged),
      references: references[i]!,
    };
    const score = SCORE_FACTORS.reduce((sum, f) => sum + options.weights[f] * factors[f], 0) / totalWeight;
    return { unit, factors, score };
  });
}
