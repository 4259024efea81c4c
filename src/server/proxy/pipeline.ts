import type { ProxyExchange, ProxyRunner, ProxyStage, StagePosition } from '../context.js';

export type {
  CachePlan,
  ProxyExchange,
  ProxyStage,
  RetrievalState,
  SplicedText,
  StagePosition,
  UpstreamResponse,
} from '../context.js';

/**
 * Runs the stages of a proxied request in order (`PROXY_STAGES`, listed in
 * one place: `stage-list.ts`). `insert` adds a stage relative to a named
 * one; the server never does, tests do to observe the seam.
 */
export class ProxyPipeline implements ProxyRunner {
  readonly stages: ProxyStage[];

  constructor(stages: readonly ProxyStage[]) {
    this.stages = [...stages];
  }

  /** Inserts `stage` before or after the stage named in `at`. */
  insert(stage: ProxyStage, at: StagePosition): void {
    const name = 'before' in at ? at.before : at.after;
    const i = this.stages.findIndex((s) => s.name === name);
    if (i < 0) throw new Error(`no pipeline stage named "${name}"`);
    this.stages.splice('before' in at ? i : i + 1, 0, stage);
  }

  /** Runs the stages in order (each decides whether to call the next). */
  run(ex: ProxyExchange): Promise<void> {
    const step = (i: number): Promise<void> => {
      const stage = this.stages[i];
      return stage ? stage.run(ex, () => step(i + 1)) : Promise.resolve();
    };
    return step(0);
  }
}
