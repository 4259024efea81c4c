/**
 * The engine's documented thresholds (docs/engine.md). Changing any value that
 * affects output must bump `ENGINE_VERSION`, which is part of every memo key,
 * so results cached under the old rules are never mixed with new ones.
 */

/** Version of the compression rules; part of every memo key. */
export const ENGINE_VERSION = 6;

/** Content below this many tokens passes unchanged. */
export const SMALL_OUTPUT_TOKENS = 300;

/**
 * A compressed form replaces the original only if it saves at least this many
 * tokens and at least `MIN_SAVINGS_RATIO` of the original.
 */
export const MIN_SAVED_TOKENS = 40;
/** See `MIN_SAVED_TOKENS`. */
export const MIN_SAVINGS_RATIO = 0.1;

/** Lines of context kept before and after the first error of each kind in logs. */
export const LOG_CONTEXT_LINES = 1;

/** Lines of a log kept at its head and tail once errors, summaries and warnings are in (the first and last 2 always). */
export const HEAD_LINES = 5;
/** See `HEAD_LINES`. */
export const TAIL_LINES = 5;

/** Items kept at each end of a JSON array when they fit (the first and last item always). */
export const JSON_EDGE_ITEMS = 3;

/** JSON arrays with fewer items than this are kept whole. */
export const JSON_MIN_ITEMS = 5;

/** Unchanged context lines kept around each changed line of a diff hunk. */
export const DIFF_CONTEXT_LINES = 1;

/** Matches kept per file in search results, beyond those with known identifiers. */
export const SEARCH_MATCHES_PER_FILE = 3;

/** Source files still this large after lossless steps are folded (definitions and new identifiers kept). */
export const CODE_FOLD_MIN_TOKENS = 500;

/**
 * Size cap of a lossy selection per content type: the kept lines or items
 * (and their gap notes) may cost at most `base + share * tokens`, and never
 * more than `max` tokens. Mandatory parts (first and last lines, the first
 * error of each kind, user terms) come first, then new identifiers, then an
 * even spread.
 */
export const CAPS = {
  log: { base: 100, share: 0.03, max: 2000 },
  text: { base: 100, share: 0.05, max: 2000 },
  table: { base: 100, share: 0.05, max: 2000 },
  search: { base: 100, share: 0.08, max: 2000 },
  json: { base: 100, share: 0.06, max: 2500 },
  code: { base: 120, share: 0.08, max: 2500 },
} as const;

/** The smallest cap a scaled-down selection gets (compress-harder, see `CompressContext.capScale`). */
export const MIN_SCALED_CAP = 30;

/**
 * The cap in tokens for `tokens` of content of a type (see `CAPS`), times
 * `scale`: 1 normally; lower when the context manager compresses harder or
 * TOIN finds a shape is never retrieved, higher (up to 2) when TOIN finds it
 * often retrieved.
 */
export function capFor(type: keyof typeof CAPS, tokens: number, scale = 1): number {
  const c = CAPS[type];
  const cap = Math.min(c.max, Math.round(c.base + tokens * c.share));
  if (scale === 1) return cap;
  return scale > 1 ? Math.round(cap * scale) : Math.max(MIN_SCALED_CAP, Math.round(cap * scale));
}

/** Kept lines longer than this many characters show their start and end only. */
export const LONG_LINE_CHARS = 600;

/**
 * The index of an omitted part (names that occur only there) may cost this
 * share of the cap, at least `INDEX_MIN_TOKENS` and at most `INDEX_MAX_TOKENS`.
 */
export const INDEX_SHARE = 0.3;
/** The index may always use at least this many tokens. */
export const INDEX_MIN_TOKENS = 60;
/** See `INDEX_SHARE`. */
export const INDEX_MAX_TOKENS = 150;

/** Token budget of the omitted-part index for a selection with cap `cap`. */
export function indexBudget(cap: number): number {
  return Math.min(INDEX_MAX_TOKENS, Math.max(INDEX_MIN_TOKENS, Math.round(cap * INDEX_SHARE)));
}
