import { RETRIEVE_TOOL_NAME } from '../../engine/markers.js';
import type { FormatName } from '../../formats/types.js';
import { parseArguments, type RetrievalCall } from './tool.js';

type Json = Record<string, unknown>;

/** One server-sent event: its raw text (relayed as is) and its fields. */
export interface SseEvent {
  raw: string;
  event: string | undefined;
  data: string;
}

/** Splits a byte stream into SSE events, keeping each event's raw text. */
export async function* sseEvents(body: AsyncIterable<Buffer | string>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buf = '';
  const parse = (raw: string): SseEvent => {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of raw.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    return { raw, event, data: data.join('\n') };
  };
  for await (const chunk of body) {
    buf += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    for (let m = /\r?\n\r?\n/.exec(buf); m; m = /\r?\n\r?\n/.exec(buf)) {
      const raw = buf.slice(0, m.index + m[0].length);
      buf = buf.slice(m.index + m[0].length);
      if (raw.trim()) yield parse(raw);
    }
  }
  buf += decoder.decode();
  if (buf.trim()) yield parse(`${buf}\n\n`);
}

/** What one streamed round of the model asked for. */
export interface RoundResult {
  calls: RetrievalCall[];
  /** The model's turn to append before the answers (only when `calls` is not empty). */
  assistant: Json;
}

/**
 * Relays the rounds of one streamed response to the client as one answer:
 * text and thinking go out as they arrive; tool calls are held until the
 * round ends. A round that called the retrieval tool is not shown (its
 * calls are answered and the conversation continues upstream); the last
 * round is, with any retrieval calls taken out.
 */
export interface StreamRelay {
  round(
    events: AsyncIterable<SseEvent>,
    last: boolean,
    write: (text: string) => Promise<void>,
  ): Promise<RoundResult>;
}

const sse = (event: string | undefined, data: Json) =>
  `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
const parseData = (ev: SseEvent): Json | undefined => {
  try {
    const v = JSON.parse(ev.data) as unknown;
    return typeof v === 'object' && v !== null ? (v as Json) : undefined;
  } catch {
    return undefined;
  }
};

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
      return { type: 'tool_use', id: b.start.id, name: b.start.name, input: parseArguments(b.json) };
    default:
      return b.start;
  }
}

function messagesRelay(): StreamRelay {
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
        return write(b.mapped === index ? ev.raw : sse(ev.event, { ...data, index: b.mapped }));
      };
      for await (const ev of events) {
        const data = parseData(ev);
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
      const ours = [...blocks].filter(
        ([, b]) => b.start.type === 'tool_use' && b.start.name === RETRIEVE_TOOL_NAME,
      );
      const calls = ours.map(([, b]) => ({ id: String(b.start.id), input: parseArguments(b.json) }));
      if (calls.length === 0 || last) {
        const hidden = new Set(ours.map(([i]) => i));
        for (const h of held)
          if (h.index === undefined || !hidden.has(h.index)) await emit(h.ev, h.data, h.index);
        const otherTools = [...blocks].some(([i, b]) => b.start.type === 'tool_use' && !hidden.has(i));
        for (const t of tail) {
          const delta = (t.data?.delta ?? {}) as Json;
          if (hidden.size > 0 && !otherTools && delta.stop_reason === 'tool_use') {
            await write(sse(t.ev.event, { ...t.data, delta: { ...delta, stop_reason: 'end_turn' } }));
          } else await write(t.ev.raw);
        }
        return { calls: [], assistant: {} };
      }
      const content = [...blocks]
        .sort(([a], [b]) => a - b)
        .filter(([, b]) => b.start.type !== 'tool_use' || b.start.name === RETRIEVE_TOOL_NAME)
        .map(([, b]) => blockContent(b));
      return { calls, assistant: { role: 'assistant', content } };
    },
  };
}

interface ChatCallState {
  id: string;
  name: string;
  args: string;
}

function chatRelay(): StreamRelay {
  let rounds = 0;
  let firstId: unknown;
  return {
    async round(events, last, write) {
      const r = rounds++;
      const held: Array<{ ev: SseEvent; data: Json | undefined }> = [];
      const calls = new Map<number, ChatCallState>();
      let content = '';
      let holding = false;
      const out = async (ev: SseEvent, data: Json | undefined, changed = false) => {
        if (!data) return write(ev.raw);
        if (r === 0 && !changed) return write(ev.raw);
        return write(sse(undefined, firstId === undefined ? data : { ...data, id: firstId }));
      };
      for await (const ev of events) {
        const data = ev.data.trim() === '[DONE]' ? undefined : parseData(ev);
        if (r === 0 && firstId === undefined && data?.id !== undefined) firstId = data.id;
        const choices = Array.isArray(data?.choices) ? (data.choices as Json[]) : undefined;
        const choice = choices?.[0];
        const delta = (choice?.delta ?? {}) as {
          content?: unknown;
          role?: unknown;
          tool_calls?: Array<Json>;
        };
        if (typeof delta.content === 'string') content += delta.content;
        for (const tc of delta.tool_calls ?? []) {
          const i = Number(tc.index ?? 0);
          const c = calls.get(i) ?? { id: '', name: '', args: '' };
          const fn = (tc.function ?? {}) as { name?: unknown; arguments?: unknown };
          if (typeof tc.id === 'string') c.id = tc.id;
          if (typeof fn.name === 'string') c.name += fn.name;
          if (typeof fn.arguments === 'string') c.args += fn.arguments;
          calls.set(i, c);
          holding = true;
        }
        const finishing =
          data === undefined ||
          choice?.finish_reason != null ||
          (choices !== undefined && choices.length === 0);
        if (holding || finishing) {
          held.push({ ev, data });
          continue;
        }
        // later rounds: the client already has the opening role chunk
        if (r > 0 && delta.role !== undefined && !delta.content && !delta.tool_calls) continue;
        await out(ev, data);
      }
      const ours = [...calls].filter(([, c]) => c.name === RETRIEVE_TOOL_NAME);
      if (ours.length === 0 || last) {
        const hidden = new Set(ours.map(([i]) => i));
        const others = calls.size > hidden.size;
        for (const h of held) {
          if (!h.data || hidden.size === 0) {
            await out(h.ev, h.data);
            continue;
          }
          const choices = (Array.isArray(h.data.choices) ? h.data.choices : []) as Json[];
          let dropped = false;
          const next = choices.map((choice) => {
            const delta = (choice.delta ?? {}) as Json & { tool_calls?: Json[] };
            const kept = (delta.tool_calls ?? []).filter((tc) => !hidden.has(Number(tc.index ?? 0)));
            const { tool_calls: _t, ...rest } = delta;
            const nd: Json = kept.length > 0 ? { ...rest, tool_calls: kept } : rest;
            if (
              (delta.tool_calls?.length ?? 0) > 0 &&
              kept.length === 0 &&
              choice.finish_reason == null &&
              Object.keys(rest).length === 0
            )
              dropped = true;
            const finish = choice.finish_reason === 'tool_calls' && !others ? 'stop' : choice.finish_reason;
            return { ...choice, delta: nd, finish_reason: finish };
          });
          if (!dropped) await out(h.ev, { ...h.data, choices: next }, true);
        }
        return { calls: [], assistant: {} };
      }
      const tool_calls = ours.map(([, c]) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: c.args },
      }));
      return {
        calls: ours.map(([, c]) => ({ id: c.id, input: parseArguments(c.args) })),
        assistant: { role: 'assistant', content: content || null, tool_calls },
      };
    },
  };
}

/** A relay for one streamed response in `format`. */
export function createStreamRelay(format: FormatName): StreamRelay {
  return format === 'messages' ? messagesRelay() : chatRelay();
}
