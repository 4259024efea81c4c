/**
 * The engine's documented thresholds (docs/engine.md). Changing any value that
 * affects output must bump `ENGINE_VERSION`, which is part of every memo key,
 * so results cached under the old rules are never mixed with new ones.
 */

/** Version of the compression rules; part of every memo key. */
export const ENGINE_VERSION = 1;

/** Content below this many tokens passes unchanged. */
export const SMALL_OUTPUT_TOKENS = 300;

/**
 * A compressed form replaces the original only if it saves at least this many
 * tokens and at least `MIN_SAVINGS_RATIO` of the original.
 */
export const MIN_SAVED_TOKENS = 40;
/** See `MIN_SAVED_TOKENS`. */
export const MIN_SAVINGS_RATIO = 0.1;

/** Lines of context kept before and after an error or warning line in logs. */
export const LOG_CONTEXT_LINES = 2;

/** Lines always kept at the head and at the tail of line-based content. */
export const HEAD_LINES = 5;
/** See `HEAD_LINES`. */
export const TAIL_LINES = 5;

/** Items always kept at each end of a JSON array. */
export const JSON_EDGE_ITEMS = 3;

/** JSON arrays with fewer items than this are kept whole. */
export const JSON_MIN_ITEMS = 8;

/** Unchanged context lines kept around each changed line of a diff hunk. */
export const DIFF_CONTEXT_LINES = 1;

/** Matches kept per file in search results, beyond those with known identifiers. */
export const SEARCH_MATCHES_PER_FILE = 3;

/** Source files still this large after lossless steps are folded (definitions and new identifiers kept). */
export const CODE_FOLD_MIN_TOKENS = 800;
/** Budget of a folded file beyond its definitions: this share of its tokens, at most `CODE_FOLD_MAX`. */
export const CODE_FOLD_SHARE = 0.2;
/** See `CODE_FOLD_SHARE`. */
export const CODE_FOLD_MAX = 2000;
