import type { ReportedUsage } from '../../events.js';
import { isObject, parseToolArguments } from '../body.js';
import { parseSseData, sseText } from '../sse.js';
import type { SseEvent, SseEventKind, SseUsageReader, StreamRelay } from '../types.js';
import { isCall, keptForContinuation, usageOf } from './response.js';

type Json = Record<string, unknown>;

/** Events that end a Responses stream, each carrying the whole response object. */
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);
/** Events that open a stream (a later round's are not shown: the client has them). */
const OPENING = new Set(['response.created', 'response.in_progress', 'response.queued']);

/** An event's type: its `event:` name, else the `type` of its data. */
function typeOf(event: string | undefined, data: Json | undefined): string | undefined {
  return event ?? (typeof data?.type === 'string' ? data.type : undefined);
}

/** Usage is on the response object of the terminal event (`response.completed`...). */
export function createSseUsageReader(): SseUsageReader {
  let usage: ReportedUsage | undefined;
  return {
    onEvent(event, data) {
      if (!data.includes('"usage"')) return;
      try {
        const parsed = JSON.parse(data) as unknown;
        if (!isObject(parsed) || !TERMINAL.has(String(event ?? parsed.type))) return;
        usage = (isObject(parsed.response) ? usageOf(parsed.response.usage) : undefined) ?? usage;
      } catch {
        // Not JSON: not a usage event.
      }
    },
    usage: () => usage,
  };
}

/**
 * How a Responses stream ends: `response.completed` or `response.incomplete`
 * (a clean end); `response.failed` and `error` are failures.
 */
export function classifySseEvent(event: { event?: string | undefined; data: string }): SseEventKind {
  let type = event.event;
  if (type === undefined) {
    const m = /"type"\s*:\s*"([^"]+)"/.exec(event.data);
    type = m?.[1];
  }
  if (type === 'response.completed' || type === 'response.incomplete') return 'final';
  if (type === 'response.failed' || type === 'error') return 'error';
  return 'data';
}

/**
 * The retrieval relay of a Responses stream. The client sees one response:
 * the first round's id and opening events, its output items numbered in the
 * order it received them (`output_index`), events numbered one after another
 * (`sequence_number`), and a final response object whose `output` is every
 * item it was shown. Output from the first call item of a round on is held
 * until the round ends; a round that called svc's tool is answered, not
 * shown; the last is shown without those calls.
 */
export function createStreamRelay(toolName: string): StreamRelay {
  let rounds = 0;
  let firstId: unknown;
  /** Items shown to the client, by the client's output_index. */
  const shown: Json[] = [];
  /** Output items announced to the client so far. */
  let added = 0;
  /** The next sequence number the client expects. */
  let seq = 0;
  return {
    async round(events, last, write) {
      const r = rounds++;
      /** Upstream output_index -> the client's, for this round. */
      const indexOf = new Map<number, number>();
      const items = new Map<number, Json>();
      const held: Array<{ ev: SseEvent; data: Json | undefined }> = [];
      let holding = false;
      const out = async (ev: SseEvent, data: Json | undefined, type: string | undefined) => {
        if (!data) return write(ev.raw);
        const next: Json = { ...data };
        if (typeof data.output_index === 'number') {
          const upstream = data.output_index;
          if (type === 'response.output_item.added' && !indexOf.has(upstream)) indexOf.set(upstream, added++);
          const mine = indexOf.get(upstream) ?? upstream;
          next.output_index = mine;
          if (type === 'response.output_item.done' && isObject(data.item)) shown[mine] = data.item;
        }
        if (typeof data.sequence_number === 'number') next.sequence_number = seq++;
        if (type !== undefined && TERMINAL.has(type) && isObject(data.response) && r > 0)
          next.response = {
            ...data.response,
            id: firstId ?? data.response.id,
            output: shown.filter(Boolean),
          };
        else if (type !== undefined && TERMINAL.has(type) && isObject(data.response))
          next.response = { ...data.response, output: shown.filter(Boolean) };
        const same =
          next.output_index === data.output_index &&
          next.sequence_number === data.sequence_number &&
          (next.response === undefined || JSON.stringify(next.response) === JSON.stringify(data.response));
        return write(same ? ev.raw : sseText(ev.event, next));
      };
      for await (const ev of events) {
        const data = parseSseData(ev);
        const type = typeOf(ev.event, data);
        if (r === 0 && firstId === undefined && isObject(data?.response)) firstId = data.response.id;
        if (
          type === 'response.output_item.done' &&
          typeof data?.output_index === 'number' &&
          isObject(data.item)
        )
          items.set(data.output_index, data.item);
        if (r > 0 && type !== undefined && OPENING.has(type)) continue;
        if (type === 'response.output_item.added' && isObject(data?.item) && isCall(data.item))
          holding = true;
        if (holding || (type !== undefined && TERMINAL.has(type))) {
          held.push({ ev, data });
          continue;
        }
        await out(ev, data, type);
      }
      const ours = [...items].filter(([, item]) => item.type === 'function_call' && item.name === toolName);
      if (ours.length === 0 || last) {
        const hidden = new Set(ours.map(([i]) => i));
        for (const h of held) {
          const at = h.data?.output_index;
          if (typeof at === 'number' && hidden.has(at)) continue;
          await out(h.ev, h.data, typeOf(h.ev.event, h.data));
        }
        return { calls: [], assistant: {} };
      }
      return {
        calls: ours.map(([, item]) => ({
          id: String(item.call_id ?? ''),
          input: parseToolArguments(String(item.arguments ?? '')),
        })),
        assistant: [...items]
          .sort(([a], [b]) => a - b)
          .map(([, item]) => item)
          .filter((item) => keptForContinuation(item, toolName)),
      };
    },
  };
}
