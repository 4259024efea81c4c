import { createParser } from 'eventsource-parser';
import type { ReportedUsage } from '../events.js';
import type { ProviderFormat } from './types.js';

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
