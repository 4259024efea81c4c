import type { ReportedUsage } from '../../events.js';
import { isObject, parseToolArguments } from '../body.js';
import { parseSseData, sseText } from '../sse.js';
import type { SseEvent, SseEventKind, SseUsageReader, StreamRelay } from '../types.js';
import { complete, usageOf } from './response.js';

type Json = Record<string, unknown>;

/** `message_start` carries input usage, each `message_delta` the cumulative output (and, lately, input) usage. */
export function createSseUsageReader(): SseUsageReader {
  const u: Partial<ReportedUsage> = {};
  return {
    onEvent(event, data) {
      if (event !== 'message_start' && event !== 'message_delta') return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(data);
      } catch {
        return;
      }
      if (!isObject(parsed)) return;
      if (event === 'message_start' && isObject(parsed.message)) usageOf(parsed.message.usage, u);
      else usageOf(parsed.usage, u);
    },
    usage: () => complete(u),
  };
}

/**
 * How a messages stream ends cleanly, and what marks a failure inside it: a
 * `message_stop` event; an `error` event is a failure.
 */
export function classifySseEvent(event: { event?: string | undefined; data: string }): SseEventKind {
  if (event.event === 'message_stop') return 'final';
  if (event.event === 'error') return 'error';
  if (event.event === undefined && /"type"\s*:\s*"message_stop"/.test(event.data)) return 'final';
  return /^\s*\{\s*"type"\s*:\s*"error"/.test(event.data) ? 'error' : 'data';
}

interface BlockState {
  start: Json;
  text: string;
  thinking: string;
  signature: string;
  json: string;
  held: boolean;
  mapped?: number;
}

function blockContent(b: BlockState): Json {
  switch (b.start.type) {
    case 'text':
      return { ...b.start, text: b.text };
    case 'thinking':
      return { ...b.start, thinking: b.thinking, signature: b.signature };
    case 'tool_use':
      return { type: 'tool_use', id: b.start.id, name: b.start.name, input: parseToolArguments(b.json) };
    default:
      return b.start;
  }
}

/** The retrieval relay of a messages stream: content blocks are renumbered across rounds. */
export function createStreamRelay(toolName: string): StreamRelay {
  let nextIndex = 0;
  let rounds = 0;
  return {
    async round(events, last, write) {
      const r = rounds++;
      const blocks = new Map<number, BlockState>();
      const held: Array<{ ev: SseEvent; data: Json | undefined; index: number | undefined }> = [];
      const tail: Array<{ ev: SseEvent; data: Json | undefined }> = [];
      let holding = false;
      const emit = async (ev: SseEvent, data: Json | undefined, index: number | undefined) => {
        const b = index === undefined ? undefined : blocks.get(index);
        if (!b || !data) return write(ev.raw);
        b.mapped ??= nextIndex++;
        return write(b.mapped === index ? ev.raw : sseText(ev.event, { ...data, index: b.mapped }));
      };
      for await (const ev of events) {
        const data = parseSseData(ev);
        const type = ev.event ?? (data?.type as string | undefined);
        if (type === 'message_start') {
          if (r === 0) await write(ev.raw);
          continue;
        }
        if (type === 'message_delta' || type === 'message_stop') {
          tail.push({ ev, data });
          continue;
        }
        const index = typeof data?.index === 'number' ? data.index : undefined;
        if (type === 'content_block_start' && data && index !== undefined) {
          const start = (data.content_block ?? {}) as Json;
          if (start.type === 'tool_use') holding = true;
          const str = (v: unknown) => (typeof v === 'string' ? v : '');
          blocks.set(index, {
            start,
            text: str(start.text),
            thinking: str(start.thinking),
            signature: str(start.signature),
            json: '',
            held: holding,
          });
        } else if (type === 'content_block_delta' && data && index !== undefined) {
          const b = blocks.get(index);
          const d = (data.delta ?? {}) as Json;
          if (b && d.type === 'text_delta') b.text += String(d.text ?? '');
          else if (b && d.type === 'thinking_delta') b.thinking += String(d.thinking ?? '');
          else if (b && d.type === 'signature_delta') b.signature += String(d.signature ?? '');
          else if (b && d.type === 'input_json_delta') b.json += String(d.partial_json ?? '');
        }
        const b = index === undefined ? undefined : blocks.get(index);
        if (b?.held) held.push({ ev, data, index });
        else await emit(ev, data, index);
      }
      const ours = [...blocks].filter(([, b]) => b.start.type === 'tool_use' && b.start.name === toolName);
      const calls = ours.map(([, b]) => ({ id: String(b.start.id), input: parseToolArguments(b.json) }));
      if (calls.length === 0 || last) {
        const hidden = new Set(ours.map(([i]) => i));
        for (const h of held)
          if (h.index === undefined || !hidden.has(h.index)) await emit(h.ev, h.data, h.index);
        const otherTools = [...blocks].some(([i, b]) => b.start.type === 'tool_use' && !hidden.has(i));
        for (const t of tail) {
          const delta = (t.data?.delta ?? {}) as Json;
          if (hidden.size > 0 && !otherTools && delta.stop_reason === 'tool_use') {
            await write(sseText(t.ev.event, { ...t.data, delta: { ...delta, stop_reason: 'end_turn' } }));
          } else await write(t.ev.raw);
        }
        return { calls: [], assistant: {} };
      }
      const content = [...blocks]
        .sort(([a], [b]) => a - b)
        .filter(([, b]) => b.start.type !== 'tool_use' || b.start.name === toolName)
        .map(([, b]) => blockContent(b));
      return { calls, assistant: { role: 'assistant', content } };
    },
  };
}
