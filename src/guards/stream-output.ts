/*
 * The text a streamed answer carried, for pricing a stream that reported no
 * usage (issue 15, item 4): a chat stream without `stream_options.include_usage`
 * was charged its input only ($0.000025 instead of $0.0027), so its output
 * passed the budget unseen. The SSE `data:` lines are read as they are
 * relayed: chat deltas (`content`, `refusal`, tool call names and arguments)
 * and messages deltas (`text`, `partial_json`, `thinking`).
 */

/** Collects a stream's output text as its chunks pass. */
export interface StreamOutput {
  push(chunk: Buffer): void;
  /** The output text seen so far. */
  text(): string;
}

/** Output text over this many characters is not kept (the count then covers what was kept). */
const MAX_CHARS = 4 * 1024 * 1024;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null;

function deltaText(event: unknown): string {
  if (!isObject(event)) return '';
  let out = '';
  const add = (v: unknown) => {
    if (typeof v === 'string') out += v;
  };
  if (Array.isArray(event.choices)) {
    for (const choice of event.choices) {
      const delta = isObject(choice) ? choice.delta : undefined;
      if (!isObject(delta)) continue;
      add(delta.content);
      add(delta.refusal);
      if (Array.isArray(delta.tool_calls))
        for (const call of delta.tool_calls) {
          const fn = isObject(call) ? call.function : undefined;
          if (isObject(fn)) {
            add(fn.name);
            add(fn.arguments);
          }
        }
    }
  }
  if (isObject(event.delta)) {
    add(event.delta.text);
    add(event.delta.partial_json);
    add(event.delta.thinking);
  }
  return out;
}

/**
 * A collector of the output text of an SSE stream (uncompressed bytes).
 *
 * @example const out = createStreamOutput(); taps.push((c) => out.push(c)); ... out.text()
 */
export function createStreamOutput(): StreamOutput {
  const decoder = new TextDecoder();
  let pending = '';
  let text = '';
  const line = (l: string) => {
    if (!l.startsWith('data:') || text.length > MAX_CHARS) return;
    const data = l.slice(5).trim();
    if (data === '' || data === '[DONE]') return;
    try {
      text += deltaText(JSON.parse(data));
    } catch {
      // not JSON: no output text
    }
  };
  return {
    push(chunk) {
      pending += decoder.decode(chunk, { stream: true });
      let nl = pending.indexOf('\n');
      while (nl >= 0) {
        line(pending.slice(0, nl).replace(/\r$/, ''));
        pending = pending.slice(nl + 1);
        nl = pending.indexOf('\n');
      }
    },
    text: () => text,
  };
}
