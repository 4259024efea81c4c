import { accountingStage } from '../accounting.js';
import { cacheRecordStage, guardStage } from '../guards/stages.js';
import { retrievalLoopStage, retrievalToolStage } from '../retrieval/loop.js';
import type { ProxyStage } from './pipeline.js';
import { compressStage, forwardStage, parseStage, relayStage, spliceStage } from './stages.js';

/**
 * Every stage of a proxied request, in the order it runs (docs/architecture.md
 * draws it). A stage answers and returns, or calls `next()`; the ones after
 * `forward` see the upstream's answer.
 */
export const PROXY_STAGES: readonly ProxyStage[] = [
  parseStage, // read the body (limit), format.parse
  accountingStage, // after the response: retrieval rounds, cache-aware estimate, --observe projection
  guardStage, // rate limit, cache lookup, budget reservation
  compressStage, // the engine call; originals into the CCR store
  spliceStage, // format.splice: untouched bytes stay untouched
  retrievalToolStage, // offer svc_retrieve when the body holds a marker
  forwardStage, // call the upstream
  retrievalLoopStage, // answer svc_retrieve calls, continue upstream
  cacheRecordStage, // record the answer for the cache
  relayStage, // stream the answer back; usage read on the side
];
