import table from '../../../data/models.json' with { type: 'json' };

interface ModelTable {
  defaultOutputReserve: number;
  models: Record<string, number>;
}

const MODELS = table as ModelTable;
const KEYS = Object.keys(MODELS.models).sort((a, b) => b.length - a.length);

/** Output reserve when the request sets no max_tokens (documented in docs/context.md). */
export const DEFAULT_OUTPUT_RESERVE: number = MODELS.defaultOutputReserve;

/**
 * Context window of a model from `data/models.json`: the longest key that
 * prefixes the (lowercased, provider-prefix-stripped) name. Undefined for
 * unknown models: then nothing is dropped unless `--context-limit` is set.
 *
 * @example contextLimitFor('claude-sonnet-4-5-20250929') // 200000
 */
export function contextLimitFor(model: string | undefined): number | undefined {
  if (!model) return undefined;
  const name = model.toLowerCase().replace(/^[\w-]+\//, '');
  const key = KEYS.find(
    (k) =>
      name === k ||
      name.startsWith(`${k}-`) ||
      name.startsWith(`${k}.`) ||
      name.startsWith(`${k}:`) ||
      name.startsWith(`${k}@`),
  );
  return key === undefined ? undefined : MODELS.models[key];
}

/**
 * The budget a request must fit: limit minus the output reserve (the
 * request's max_tokens, or DEFAULT_OUTPUT_RESERVE). Undefined without a limit.
 */
export function contextBudget(
  limit: number | undefined,
  outputReserve: number | undefined,
): number | undefined {
  if (limit === undefined) return undefined;
  const reserve = outputReserve !== undefined && outputReserve >= 0 ? outputReserve : DEFAULT_OUTPUT_RESERVE;
  return Math.max(0, limit - reserve);
}
