import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { EngineOutput } from '../../engine/types.js';
import type { RequestFinishedEvent } from '../../events.js';
import type { ParsedRequest, ProviderFormat } from '../../formats/index.js';
import type { SpanHints } from '../../json/spans.js';
import type { ServerContext } from '../context.js';
import type { PendingEvent } from '../finished-event.js';
import type { RequestBody } from '../read-body.js';

/** What the upstream answered: status, headers and the body as it streams. */
export interface UpstreamResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

/**
 * One proxied request on its way through the pipeline. Stages read and
 * fill in its typed fields; what one stage leaves for a later one has a
 * field of its own (`spliced`, `cachePlan`, `retrieval`).
 */
export interface ProxyExchange {
  ctx: ServerContext;
  req: IncomingMessage;
  res: ServerResponse;
  /** Path without query, e.g. `/v1/messages`. */
  path: string;
  /** Query string with its `?`, or ''. */
  search: string;
  /** The provider format of the path; undefined for other `/v1` paths (pure passthrough). */
  format: ProviderFormat | undefined;
  /** Upstream base URL up to and including `/v1`. */
  upstreamBase: string;
  /** The client's provider key (sent upstream as is); never log it. */
  clientKey: string | undefined;
  /** Request body as received; undefined when streamed through unread (other paths). */
  body: RequestBody | undefined;
  /** Decoded body text and its JSON, when the body is JSON. */
  text: string | undefined;
  json: Record<string, unknown> | undefined;
  /** Spans of `json`'s messages array in `text`, found while parsing (speeds up splicing). */
  hints: SpanHints | undefined;
  /** The request in the engine's model (formats only, when it parsed). */
  parsed: ParsedRequest | undefined;
  /** The engine's output, when compression ran and its originals are stored. */
  output: EngineOutput | undefined;
  /** Skip compression (`--no-optimize`, `x-service-bypass: true`, unreadable body). */
  skipCompression: boolean;
  /** What goes upstream: the original bytes unless a stage replaced them. */
  outBody: Buffer | Readable;
  /** `content-encoding` of `outBody`; undefined for identity. */
  outEncoding: string | undefined;
  /** Aborted when the client goes away; cancels the upstream call. */
  signal: AbortSignal;
  /** Calls the upstream with a body (used by `forward`, and by stages that need extra calls). */
  callUpstream(body: Buffer | Readable, encoding?: string | undefined): Promise<UpstreamResponse>;
  /** The response being relayed, once `forward` has it. */
  upstream: UpstreamResponse | undefined;
  /** Called with every response chunk sent to the client (as sent: still encoded). */
  responseTaps: Array<(chunk: Buffer) => void>;
  /** Called once the response has ended, before the event is emitted. */
  onFinish: Array<(ex: ProxyExchange) => void | Promise<void>>;
  /** The `request.finished` event being filled in. */
  pending: PendingEvent;
  event: RequestFinishedEvent;
  /** The body `splice` wrote and its text (valid while `outBody` is still `spliced.body`). */
  spliced: SplicedText | undefined;
  /** Set by the guards on a cache miss: where `cache-record` stores the answer. */
  cachePlan: CachePlan | undefined;
  /** Set by `retrieval-tool` when it offered the tool: what the retrieval loop continues. */
  retrieval: RetrievalState | undefined;
}

/** The spliced body and its text. */
export interface SplicedText {
  body: Buffer;
  text: string;
}

/** Where the answer to a cache miss is stored. */
export interface CachePlan {
  key: string;
}

/** What the retrieval loop needs to continue a request upstream. */
export interface RetrievalState {
  /** The body as forwarded (with the retrieval tool). */
  text: string;
  format: ProviderFormat;
}

/** One step of the request pipeline; call `next()` to go on, or answer and return. */
export interface ProxyStage {
  name: string;
  run(ex: ProxyExchange, next: () => Promise<void>): Promise<void>;
}

/** Where to put a new stage, relative to a named one. */
export type StagePosition = { before: string } | { after: string };

/**
 * Runs the stages of a proxied request in order (`PROXY_STAGES`, listed in
 * one place: `stage-list.ts`). `insert` adds a stage relative to a named
 * one; the server never does, tests do to observe the seam.
 */
export class ProxyPipeline {
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
