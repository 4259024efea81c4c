import { compressLines, type LineRules } from './log.js';
import type { CompressContext, Compressed } from './types.js';

const TEXT_RULES: LineRules = { head: 8, tail: 3, cap: 'text', kinds: true, errorsFirst: false };

/**
 * Structured plain text that is neither prose nor code (`key: value`
 * listings, trees, traces, command output): line-based selection with a
 * larger head and budget than logs.
 */
export function compressText(text: string, ctx: CompressContext): Compressed {
  return compressLines(text, ctx, TEXT_RULES);
}
