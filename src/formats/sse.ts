import { createParser } from 'eventsource-parser';
import type { ReportedUsage } from '../events.js';
import type { ProviderFormat, SseEvent } from './types.js';

/** Reads a provider's SSE stream as it passes, for its usage. */
export interface SseTap {
  /** Feeds decoded text, in arrival order (chunks may split events anywhere). */
  feed(text: string): void;
  /** Usage seen so far; undefined when the stream carried none. */
  usage(): ReportedUsage | undefined;
}

/** An SSE tap for `format` (parsing by eventsource-parser). */
export function createSseTap(format: ProviderFormat): SseTap {
  const reader = format.createSseUsageReader();
  const parser = createParser({ onEvent: (e) => reader.onEvent(e.event, e.data) });
  return {
    feed: (text) => parser.feed(text),
    usage: () => reader.usage(),
  };
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

/** One SSE event's text: `event:` line when named, one `data:` line of JSON. */
export const sseText = (event: string | undefined, data: Record<string, unknown>): string =>
  `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

/** The JSON object an event carries, or undefined. */
export function parseSseData(ev: SseEvent): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(ev.data) as unknown;
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
