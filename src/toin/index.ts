/** TOIN: what svc learns per tool-output shape, and the advice it gives the engine. */
export { adviceFrom, FULL_RATE, MIN_EVIDENCE, NEVER_RETRIEVED_AFTER, shapeAdvice } from './advice.js';
export { mergeToin, openToinStore, readToinFile, type ToinStore, type ToinStoreOptions } from './store.js';
export { emptyToin, MAX_HASHES, MAX_SHAPES, type ShapeRecord, type ToinData } from './types.js';
export { type ToinView, toinView } from './view.js';
