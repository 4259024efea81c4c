import type { ReportedUsage } from '../../events.js';
import { isObject, parseToolArguments } from '../body.js';
import { parseSseData, sseText } from '../sse.js';
import type { SseEvent, SseEventKind, SseUsageReader, StreamRelay } from '../types.js';
import { usageOf } from './response.js';

type Json = Record<string, unknown>;

/**
 * The usage chunk of a chat stream: the last chunk before `[DONE]` when the
 * client asked for `stream_options.include_usage` (svc never adds it: the
 * request is the client's). Without it the stream carries no usage.
 */
export function createSseUsageReader(): SseUsageReader {
  let usage: ReportedUsage | undefined;
  return {
    onEvent(_event, data) {
      if (data === '[DONE]' || !data.includes('"usage"')) return;
      try {
        const chunk = JSON.parse(data) as unknown;
        usage = (isObject(chunk) ? usageOf(chunk.usage) : undefined) ?? usage;
      } catch {
        // Not JSON: not a usage chunk.
      }
    },
    usage: () => usage,
  };
}

/**
 * How a chat stream ends cleanly, and what marks a failure inside it:
 * `data: [DONE]`; a chunk carrying `error` is a failure.
 */
export function classifySseEvent(event: { event?: string | undefined; data: string }): SseEventKind {
  if (event.data.trim() === '[DONE]') return 'final';
  if (event.event === 'error') return 'error';
  return /^\s*\{\s*"error"\s*:/.test(event.data) ? 'error' : 'data';
}

interface ChatCallState {
  id: string;
  name: string;
  args: string;
}

/** The retrieval relay of a chat stream: later rounds keep the first round's id. */
export function createStreamRelay(toolName: string): StreamRelay {
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
        return write(sseText(undefined, firstId === undefined ? data : { ...data, id: firstId }));
      };
      for await (const ev of events) {
        const data = ev.data.trim() === '[DONE]' ? undefined : parseSseData(ev);
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
      const ours = [...calls].filter(([, c]) => c.name === toolName);
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
        calls: ours.map(([, c]) => ({ id: c.id, input: parseToolArguments(c.args) })),
        assistant: { role: 'assistant', content: content || null, tool_calls },
      };
    },
  };
}
