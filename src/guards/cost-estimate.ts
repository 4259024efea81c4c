/**
 * Estimated USD cost of a request before it runs: input tokens at the input
 * price plus the most output it may produce at the output price. Undefined
 * when the model's price is unknown. Supplied by the pricing module.
 */
export type CostEstimator = (
  model: string,
  inputTokens: number,
  maxOutputTokens: number,
) => number | undefined;

/** An estimator that knows no prices (budgets then hold nothing for a request). */
export const unknownCost: CostEstimator = () => undefined;

/**
 * Output tokens assumed when a request sets no limit (chat format allows
 * that); the reservation is an estimate, settled with the reported usage.
 */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/** The output-token limit a request sets (`max_tokens`, `max_completion_tokens`, `max_output_tokens`). */
export function maxOutputTokens(body: Record<string, unknown>): number {
  for (const field of ['max_completion_tokens', 'max_tokens', 'max_output_tokens']) {
    const v = body[field];
    if (typeof v === 'number' && Number.isFinite(v) && v > 0) return Math.ceil(v);
  }
  return DEFAULT_MAX_OUTPUT_TOKENS;
}
