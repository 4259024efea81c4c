/**
 * The scoring factors of the context manager. Each maps a unit to [0, 1],
 * higher meaning "more worth keeping". See docs/context.md for the rationale.
 */
import type { ChatMessage } from '../types.js';
import { bm25Scores } from './bm25.js';
import { messageShape } from './shape.js';
import type { ContextUnit, ToinAdvice } from './types.js';

/** Recency: rank among the candidate units, 0 for the oldest, 1 for the newest. */
export function recencyFactor(units: readonly ContextUnit[]): number[] {
  if (units.length <= 1) return units.map(() => 1);
  return units.map((_, i) => i / (units.length - 1));
}

/**
 * Similarity to the latest user turn: BM25 of each unit's text against the
 * query, divided by the best score (so the most similar unit gets 1, units
 * sharing no term get 0).
 */
export function similarityFactor(texts: readonly string[], query: string): number[] {
  const raw = bm25Scores(texts, query);
  const best = Math.max(0, ...raw);
  return raw.map((s) => (best > 0 ? s / best : 0));
}

const ERROR_PATTERNS: RegExp[] = [
  /(?<!\b(?:0|no|zero|without) )\b(?:errors?|exceptions?|failed|failures?|fatal|panic(?:ked)?|segfault|traceback)\b/i,
  /\bexit(?:ed)?(?: with)? (?:code|status)[:= ]*[1-9]\d*/i,
  /\bE[A-Z]{3,}\b(?::|\s)/,
  /^\s+at .+[(:]\S+:\d+(?::\d+)?\)?\s*$/,
  /^\s*File ".+", line \d+/,
  /\b(?:permission denied|not found|timed out|refused|cannot|can't|unable to)\b/i,
];

/** Lines of `text` that show an error (errors, failures, stack frames, non-zero exit codes). */
export function errorHits(text: string, limit = 10): number {
  let hits = 0;
  for (const line of text.split('\n')) {
    if (line.length > 2000) continue;
    if (ERROR_PATTERNS.some((re) => re.test(line))) {
      hits += 1;
      if (hits >= limit) break;
    }
  }
  return hits;
}

/** Error indicators: 0 without any, 0.5 for one line, approaching 1 with more; flagged tool errors count double. */
export function errorFactor(text: string, flaggedErrors = 0): number {
  const hits = errorHits(text) + 2 * flaggedErrors;
  return 1 - 0.5 ** hits;
}

/*
 * Each pattern starts a match only where its leftmost match in a run of its
 * characters could start (the lookbehinds), so a run is scanned once: without
 * them a long run of letters was rescanned from every position, quadratic in
 * its length (issue 15: 80k letters took 14 s). The matches are the same.
 */
const SALIENT_PATTERNS: RegExp[] = [
  /(?<![\w.-]|[\w.-]\/)(?:[\w.-]+\/)+[\w.-]+/g,
  /\b(?<!\w-*)[\w-]+\.(?:ts|tsx|js|jsx|mjs|cjs|py|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|json|ya?ml|toml|md|sql|sh|css|html|txt|log|lock|cfg|ini)\b/g,
  /\b[A-Za-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\b/g,
  /\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/gi,
  /\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b/g,
  /\b\d{4,}\b/g,
];

const MAX_SALIENT = 2000;

/** Identifiers, paths, hashes and long numbers a message mentions. */
export function salientTokens(text: string): Set<string> {
  const out = new Set<string>();
  for (const re of SALIENT_PATTERNS) {
    for (const m of text.matchAll(re)) {
      if (m[0].length >= 4 && m[0].length <= 200) out.add(m[0]);
      if (out.size >= MAX_SALIENT) return out;
    }
  }
  return out;
}

/**
 * Forward references: how many of a unit's identifiers, paths and values are
 * mentioned again by a later message. `messageTokens[i]` are the salient
 * tokens of message i. 0 for none, approaching 1 with more.
 */
export function referenceFactor(
  units: readonly ContextUnit[],
  messageTokens: ReadonlyArray<Set<string>>,
): number[] {
  const lastSeen = new Map<string, number>();
  messageTokens.forEach((tokens, i) => {
    for (const t of tokens) lastSeen.set(t, i);
  });
  return units.map((unit) => {
    const own = new Set<string>();
    for (let i = unit.start; i < unit.end; i += 1) for (const t of messageTokens[i] ?? []) own.add(t);
    let count = 0;
    for (const t of own) if ((lastSeen.get(t) ?? -1) >= unit.end) count += 1;
    return 1 - Math.exp(-count / 3);
  });
}

/**
 * TOIN importance: the highest importance TOIN learned for the tool-output
 * shapes in the unit; 0.5 (neutral) when it holds none TOIN knows.
 */
export function toinFactor(
  messages: readonly ChatMessage[],
  unit: ContextUnit,
  advice: ToinAdvice | undefined,
): number {
  if (!advice) return 0.5;
  let best: number | undefined;
  for (let i = unit.start; i < unit.end; i += 1) {
    const shape = messageShape(messages, i);
    const known = shape ? advice.shapes[shape.key] : undefined;
    if (known) best = Math.max(best ?? 0, known.importance);
  }
  return best ?? 0.5;
}
