/**
 * The package's root export (`import { compressMessages } from 'svc-proxy'`):
 * the engine's public API, for programs that compress in-process instead of
 * through `svc serve`. The HTTP client is its own package, `svc-proxy-client`.
 *
 * @example
 * import { compressMessages, createMemoryCcrStore, putAll } from 'svc-proxy';
 * const store = createMemoryCcrStore();
 * const { result, ccrEntries } = compressMessages(messages, { model: 'gpt-4o' });
 * await putAll(store, ccrEntries); // the originals first, then send result.messages
 */
export { type CcrStore, createMemoryCcrStore, openFileCcrStore, putAll } from './ccr/index.js';
export {
  compressMessages,
  type EngineDeps,
  type EngineOptions,
  TRANSFORMS,
} from './engine/index.js';
export {
  formatMarker,
  hasMarker,
  type MarkerInfo,
  type MarkerUnit,
  parseMarkers,
  RETRIEVE_TOOL_NAME,
} from './engine/markers.js';
export { encodingForModel, tokenizerFor } from './engine/tokens.js';
export * from './engine/types.js';
export { FORMATS, type ProviderFormat } from './formats/index.js';
