/** The context manager: fits a conversation into the model's context window. */
export { bm25Scores } from './bm25.js';
export { dropMarker, summarizeDropped } from './drop-marker.js';
export {
  errorFactor,
  recencyFactor,
  referenceFactor,
  salientTokens,
  similarityFactor,
  toinFactor,
} from './factors.js';
export { harderCompressor } from './harder.js';
export { integrityProblems, toProviderTurns } from './integrity.js';
export { contextBudget, contextLimitFor, DEFAULT_OUTPUT_RESERVE } from './limits.js';
export { CUT_TARGET, DEFAULT_PROTECT_TURNS, fitToContext, MAX_HARDER_LEVEL } from './manager.js';
export { observeCompressed } from './observe.js';
export { latestUserText, scoreUnits, type UnitScore } from './scoring.js';
export { messageShape, type ToolOutputShape, toolNameFor, toolOutputShape } from './shape.js';
export { intelligentContextStep } from './step.js';
export * from './types.js';
export { buildUnits } from './units.js';
export { DEFAULT_SCORE_WEIGHTS, parseScoreWeights, resolveWeights, SCORE_FACTORS } from './weights.js';
