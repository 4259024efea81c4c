import { SvcError } from '../errors.js';

/**
 * The refusal of a request whose model has no price while a budget is set
 * (issue 15, item 4): its cost could not be reserved or charged, so it would
 * pass the budget unseen (50 of 50 such requests were admitted at $0). The
 * model gets a price in the pricing file (`--pricing-path`), or the budget
 * is lifted.
 *
 * @example throw unpricedModel('my-local-model') // 402 SVC_MODEL_UNPRICED
 */
export function unpricedModel(model: string | undefined): SvcError {
  const name = model === undefined || model === '' ? 'no model named' : `model ${JSON.stringify(model)}`;
  return new SvcError(
    'SVC_MODEL_UNPRICED',
    `a budget is set and ${name} has no price: add it to the pricing file (--pricing-path) to use it under the budget`,
    { details: { field: 'model', model: model ?? null } },
  );
}
