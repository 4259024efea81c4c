import { contentText } from '../engine/tokens.js';
import type { EngineOutput } from '../engine/types.js';
import type { JsonEdits } from '../json/spans.js';
import type { ParsedRequest, ProviderFormat } from './types.js';

type BodyMessage = { role?: unknown; content?: unknown };

/**
 * For formats whose roles must alternate (the messages format): an inserted
 * message (the context manager's drop marker, a user message) becomes a text
 * block of the neighbouring body message when that one is a user message:
 * appended to the previous one (after its tool results), else prepended to
 * the next one. Otherwise it stands alone (then its neighbours are assistant
 * messages, so the roles still alternate).
 */
export class InsertMerger {
  private body: { messages?: unknown } | undefined;
  /** Body message index -> text to put before / after its string content. */
  private readonly strings = new Map<number, { before: string[]; after: string[]; base: string }>();

  constructor(
    private readonly format: ProviderFormat,
    private readonly parsed: ParsedRequest,
    private readonly output: EngineOutput,
  ) {}

  private bodyMessage(m: number): BodyMessage | undefined {
    this.body ??= this.parsed.body as { messages?: unknown };
    const list = this.body.messages;
    return Array.isArray(list) ? (list[m] as BodyMessage | undefined) : undefined;
  }

  /** Merges inserted output message `j` into a neighbour; false when it must stand alone. */
  merge(edits: JsonEdits, j: number): boolean {
    const { origin } = { origin: this.output.messageOrigin };
    const out = this.output.result.messages;
    const insertedText = contentText(out[j]!.content);
    if (out[j]!.role !== 'user') return false;
    let prev = j - 1;
    while (prev >= 0 && origin[prev]! < 0) prev -= 1;
    let next = j + 1;
    while (next < out.length && origin[next]! < 0) next += 1;
    for (const [k, where] of [
      [prev, 'after'],
      [next, 'before'],
    ] as const) {
      const o = origin[k];
      if (o === undefined || o < 0) continue;
      const m = this.parsed.origins[o]!.message;
      const target = m >= 0 ? this.bodyMessage(m) : undefined;
      if (target?.role !== 'user') continue;
      const path = [...this.format.messagesPath, m, 'content'];
      if (typeof target.content === 'string') {
        const entry = this.strings.get(m) ?? { before: [], after: [], base: contentText(out[k]!.content) };
        entry[where].push(insertedText);
        this.strings.set(m, entry);
        return true;
      }
      if (!Array.isArray(target.content)) continue;
      const first = target.content[0] as { type?: unknown } | undefined;
      // tool results must open a user message: never put text before them
      if (where === 'before' && first?.type === 'tool_result') continue;
      const block = { type: 'text', text: insertedText };
      edits.insert(path, where === 'after' ? target.content.length : 0, block);
      return true;
    }
    return false;
  }

  /** Writes the merged string contents. */
  flush(edits: JsonEdits): void {
    for (const [m, e] of this.strings) {
      edits.set([...this.format.messagesPath, m, 'content'], [...e.before, e.base, ...e.after].join('\n\n'));
    }
  }
}
