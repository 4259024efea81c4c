import { describe, expect, it } from 'vitest';
import { generateSession } from '../../fixtures/generate.js';
import { toMessagesBody } from '../../fixtures/lib/conversation.js';
import { memoShares, stringBytes } from '../../src/engine/memo-budget.js';
import { setTokenMemoLimit, tokenizerFor, tokenMemoChars } from '../../src/engine/tokens.js';
import { PrefixParser } from '../../src/json/prefix-parse.js';
import { exposeGc } from '../../src/server/idle-gc.js';

// The memos' estimates are bounds only if they are honest (issue 19): an
// estimate that counts a two-byte text one byte a character, or leaves out the
// parsed messages, lets the process hold twice what `--memo-max-bytes` says.

describe('memory estimates of the memos', () => {
  it('counts a text as V8 keeps it: one byte a Latin-1 character, two for any text with a wider one', () => {
    const latin = 'café, naïve, 100 °C'.repeat(100);
    expect(stringBytes(latin)).toBe(16 + latin.length);
    const wide = `${'a'.repeat(1000)}→`;
    expect(stringBytes(wide)).toBe(16 + 2 * wide.length);
    expect(stringBytes('😀')).toBe(16 + 4);
  });

  it('shares --memo-max-bytes out whole', () => {
    const s = memoShares(16 * 1024 * 1024);
    expect(
      s.engineResults +
        s.bodyParses +
        2 * s.tokenCountChars +
        s.contentHashes +
        s.historyScans +
        s.spelledLengths,
    ).toBe(16 * 1024 * 1024);
  });

  it('keeps a tool list counted with countKept apart from the count memo, and counts its characters', () => {
    setTokenMemoLimit(64 * 1024);
    try {
      const tokenizer = tokenizerFor('gpt-4o');
      // a coding agent's tool list: more than this memo can hold
      const tools = JSON.stringify(
        Array.from({ length: 60 }, (_, i) => ({
          name: `tool_${i}`,
          description: `Runs step ${i} of the build: ${'reads the inputs, checks them, writes the outputs. '.repeat(30)}`,
          input_schema: { type: 'object', properties: { path: { type: 'string' } } },
        })),
      );
      expect(tools.length).toBeGreaterThan(64 * 1024);
      const n = tokenizer.countKept?.(tools) ?? -1;
      // texts counted after it fill the count memo; the list's count is still held, and reported
      for (let i = 0; i < 200; i++) tokenizer.countText(`line ${i} of another output `.repeat(40));
      expect(tokenMemoChars()).toBeGreaterThanOrEqual(tools.length);
      expect(tokenizer.countText(tools)).toBe(n);
    } finally {
      setTokenMemoLimit(16 * 1024 * 1024);
    }
  });

  it('the reused-parse memo estimates what it keeps alive (text, bytes, parsed messages) within 25 %', () => {
    const gc = exposeGc()!;
    // a Claude Code shaped conversation: its text has characters beyond Latin-1
    const base = JSON.stringify(toMessagesBody(generateSession(20_000)));
    expect(stringBytes(base)).toBe(16 + 2 * base.length);
    const measure = () => {
      gc();
      gc();
      const m = process.memoryUsage();
      return m.heapUsed + m.external;
    };
    const parser = new PrefixParser(1024 * 1024 * 1024);
    const before = measure();
    for (let i = 0; i < 30; i++) {
      // 30 new conversations (the first message differs), each kept whole
      parser.parseBytes(Buffer.from(base.replace('"text":"', `"text":"conversation ${i}: `)));
    }
    const held = measure() - before;
    const estimate = parser.memoryBytes();
    expect(held).toBeGreaterThan(5 * 1024 * 1024);
    expect(held).toBeLessThan(estimate * 1.25);
    expect(estimate).toBeLessThan(held * 1.5);
  });
});
