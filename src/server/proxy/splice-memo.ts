import type { EngineOutput } from '../../engine/types.js';
import { type ParsedRequest, type ProviderFormat, spliceRequest } from '../../formats/index.js';
import type { SpanHints } from '../../json/spans.js';
import type { SplicedText } from '../context.js';

/**
 * The body the proxy forwards for a request the engine compressed: the
 * engine's output written into the original text (`spliceRequest`), encoded.
 *
 * A memoized turn (the same body again: a client's retry, a sub-agent
 * re-sending its context) repeats the same text and gets the same output
 * from the engine's memo, message by message; writing and encoding the same
 * body again would cost a pass over the whole history (principle 4). The
 * last body written for a messages array is kept with it (the body parser
 * hands on the same array for a body it has seen) and given again when the
 * text and the output are the same. Only the bytes are kept; their text is
 * decoded if a later stage asks for it.
 */

interface WrittenBody {
  text: string;
  format: ProviderFormat;
  /** Per output message: its origin, and its content (kept messages) or the message itself (inserted ones). */
  origin: number[];
  parts: unknown[];
  /** The body written, undefined when nothing changed. */
  body: Buffer | undefined;
}

const written = new WeakMap<object, WrittenBody>();

/** Bodies a memo holds to give again (here and in the retrieval-tool stage). */
const kept = new WeakSet<Buffer>();

/**
 * Marks `body` as held by a memo that gives it to later requests: its bytes
 * must stay as they are (never transferred to another thread, never reused).
 */
export function keepBody(body: Buffer): Buffer {
  kept.add(body);
  return body;
}

/** True when a memo holds `body` (see `keepBody`). */
export function isKeptBody(body: Buffer): boolean {
  return kept.has(body);
}

/** What the splice reads of an output message: the content of a kept one, all of an inserted one. */
function partOf(output: EngineOutput, j: number): unknown {
  const msg = output.result.messages[j]!;
  return (output.messageOrigin[j] ?? -1) >= 0 ? msg.content : msg;
}

function sameOutput(known: WrittenBody, output: EngineOutput): boolean {
  const { messageOrigin } = output;
  if (known.origin.length !== messageOrigin.length) return false;
  if (output.result.messages.length !== messageOrigin.length) return false;
  for (let j = 0; j < messageOrigin.length; j++)
    if (known.origin[j] !== messageOrigin[j] || known.parts[j] !== partOf(output, j)) return false;
  return true;
}

/** A spliced body whose text is decoded from its bytes when asked for (exact: the bytes were encoded from it). */
function fromBytes(body: Buffer): SplicedText {
  let text: string | undefined;
  return {
    body,
    get text() {
      text ??= body.toString('utf8');
      return text;
    },
  };
}

/**
 * The forwarded body for `output` written into `text` (see `spliceRequest`);
 * undefined when nothing changed. `messages` is the messages array of the
 * parsed body (the key of the memo), or undefined when it has none.
 */
export function writeBody(
  format: ProviderFormat,
  text: string,
  parsed: ParsedRequest,
  output: EngineOutput,
  hints: SpanHints | undefined,
  messages: unknown,
): SplicedText | undefined {
  const key = typeof messages === 'object' && messages !== null ? messages : undefined;
  const known = key ? written.get(key) : undefined;
  if (known && known.format === format && known.text === text && sameOutput(known, output))
    return known.body ? fromBytes(known.body) : undefined;
  const spliced = spliceRequest(format, text, parsed, output, hints);
  const body = spliced === undefined ? undefined : keepBody(Buffer.from(spliced, 'utf8'));
  if (key) {
    const n = output.messageOrigin.length;
    const parts = new Array<unknown>(n);
    for (let j = 0; j < n; j++) parts[j] = partOf(output, j);
    written.set(key, { text, format, origin: [...output.messageOrigin], parts, body });
  }
  return body && spliced !== undefined ? { body, text: spliced } : undefined;
}
