import { compressLines, type LineRules } from './log.js';
import type { CompressContext, Compressed } from './types.js';

const TABLE_RULES: LineRules = { head: 3, tail: 2, cap: 'table', kinds: false, errorsFirst: true };

/**
 * Tables (column-aligned command output such as `kubectl get`, `ps`, `df`):
 * the header and first rows stay; rows with errors or failure states, rows
 * naming a term of the latest user message, rows with new identifiers and an
 * even spread fill the budget.
 */
export function compressTable(text: string, ctx: CompressContext): Compressed {
  return compressLines(text, ctx, TABLE_RULES);
}
