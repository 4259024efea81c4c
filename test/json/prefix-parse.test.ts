import { describe, expect, it } from 'vitest';
import { PrefixParser } from '../../src/json/prefix-parse.js';
import { applyJsonEdits, JsonEdits } from '../../src/json/spans.js';

/** A conversation of `n` messages: alternating tool calls and (long) results. */
function conversation(n: number, mark?: number): unknown[] {
  return Array.from({ length: n }, (_, i) =>
    i % 2 === 0
      ? {
          role: 'assistant',
          content: [{ type: 'tool_use', id: `t${i}`, name: 'grep', input: { q: `x${i}` } }],
        }
      : {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: `t${i - 1}`,
              content: `line "${i}" é\n`.repeat(30),
              ...(i === mark ? { cache_control: { type: 'ephemeral' } } : {}),
            },
          ],
        },
  );
}

function body(messages: unknown[], extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ model: 'claude-sonnet-4-5', system: 'be brief', messages, ...extra });
}

describe('PrefixParser', () => {
  it('parses a growing conversation as JSON.parse does, reusing the earlier messages', () => {
    const parser = new PrefixParser();
    let before: unknown[] | undefined;
    for (const n of [3, 5, 9, 9, 12]) {
      const text = body(conversation(n), { tools: [{ name: 'grep' }], max_tokens: n });
      const got = parser.parse(text);
      expect(got.value).toEqual(JSON.parse(text));
      expect(Object.keys(got.value as object)).toEqual(Object.keys(JSON.parse(text)));
      const messages = (got.value as { messages: unknown[] }).messages;
      if (before) {
        expect(got.reused).toBe(before.length);
        // the very same objects: the memos downstream recognise them by identity
        for (let i = 0; i < before.length; i++) expect(messages[i]).toBe(before[i]);
      } else expect(got.reused).toBe(0);
      before = messages;
    }
  });

  it('reuses up to the last unchanged message when the client edits the end (a moved cache_control)', () => {
    const parser = new PrefixParser();
    parser.parse(body(conversation(21, 19)));
    const text = body(conversation(25, 23));
    const got = parser.parse(text);
    expect(got.reused).toBe(19);
    expect(got.value).toEqual(JSON.parse(text));
  });

  // an edit in the second half of the history: reused up to it; in the first half: parsed whole
  it.each([
    [20, 20],
    [4, 0],
  ])(
    'edits message %i of a 30-message history: reuses %i messages, parses exactly, keeps it',
    (at, reused) => {
      const parser = new PrefixParser();
      parser.parse(body(conversation(30)));
      const edited = conversation(32);
      edited[at] = { role: 'assistant', content: 'changed' };
      const text = body(edited);
      const got = parser.parse(text);
      expect(got.reused).toBe(reused);
      expect(got.value).toEqual(JSON.parse(text));
      // its own next turn reuses it whole
      expect(parser.parse(body([...edited, ...conversation(34).slice(32)])).reused).toBe(32);
    },
  );

  it('leaves bodies with a key repeated after the messages to JSON.parse (last one wins)', () => {
    const parser = new PrefixParser();
    parser.parse(body(conversation(5)));
    const text = `${body(conversation(7)).slice(0, -1)},"model":"other","system":"again"}`;
    const got = parser.parse(text);
    expect(got.reused).toBe(0);
    expect(got.value).toEqual(JSON.parse(text));
    expect((got.value as { model: string }).model).toBe('other');
  });

  it('keeps a __proto__ member an own member, as JSON.parse does', () => {
    const parser = new PrefixParser();
    const head = '{"__proto__":{"polluted":true},"messages":';
    parser.parse(`${head}${JSON.stringify(conversation(3))}}`);
    const text = `${head}${JSON.stringify(conversation(5))}}`;
    const got = parser.parse(text) as { value: Record<string, unknown> };
    expect(got.value).toEqual(JSON.parse(text));
    expect(Object.hasOwn(got.value, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('throws what JSON.parse throws on a body that starts like an earlier one but is broken', () => {
    const parser = new PrefixParser();
    parser.parse(body(conversation(5)));
    const broken = body(conversation(7)).slice(0, -40);
    expect(() => parser.parse(broken)).toThrow(SyntaxError);
    expect(() => parser.parse(`${body(conversation(7))} trailing`)).toThrow(SyntaxError);
    // and the earlier body is still there to reuse
    expect(parser.parse(body(conversation(9))).reused).toBe(5);
  });

  it('parses non-object and message-less bodies as JSON.parse does', () => {
    const parser = new PrefixParser();
    for (const text of ['[1,2]', '"x"', '{"model":"m"}', '{"messages":[]}', '{"messages":{}}']) {
      expect(parser.parse(text).value).toEqual(JSON.parse(text));
      expect(parser.parse(text).value).toEqual(JSON.parse(text));
    }
  });

  it('hands spans that splice exactly as a scan would', () => {
    const parser = new PrefixParser();
    parser.parse(body(conversation(9)));
    const text = body(conversation(13), { stream: true });
    const got = parser.parse(text);
    const edits = () => {
      const e = new JsonEdits();
      e.set(['messages', 3, 'content', 0, 'content'], 'short');
      e.set(['messages', 11, 'content', 0, 'content'], 'shorter');
      e.remove(['messages', 6]);
      return e;
    };
    const withHints = applyJsonEdits(text, edits(), got.value, got.hints);
    expect(withHints).toBe(applyJsonEdits(text, edits()));
    expect(JSON.parse(withHints).messages[3].content[0].content).toBe('short');
  });

  it('gives the same body again its earlier parse, the very same objects', () => {
    const parser = new PrefixParser();
    const text = body(conversation(7), { tools: [{ name: 'grep' }], max_tokens: 9 });
    const first = parser.parse(text);
    const again = parser.parse(`${text}`);
    expect(again.value).toBe(first.value);
    expect(again.reused).toBe(7);
    expect(again.value).toEqual(JSON.parse(text));
    const byBytes = new PrefixParser();
    const firstBytes = byBytes.parseBytes(Buffer.from(text));
    const bytes = byBytes.parseBytes(Buffer.from(text));
    expect(bytes.value).toBe(firstBytes.value);
    expect(bytes.text).toBe(firstBytes.text);
    expect(bytes.text).toBe(text);
  });

  it('reuses the members after the messages when the text after them is the same, at the same place', () => {
    const parser = new PrefixParser();
    const tools = [{ name: 'grep', input_schema: { type: 'object' } }];
    const turn = (messages: unknown[], extra: Record<string, unknown> = {}) =>
      JSON.stringify({ model: 'm', messages, system: 'be brief', tools, ...extra });
    const first = parser.parse(turn(conversation(5)));
    // the last message edited in place (same length): the members after it are the very same objects
    const edited = conversation(5);
    edited[4] = { role: 'user', content: [{ type: 'text', text: 'x' }] };
    const sameLength = JSON.stringify(conversation(5)[4]).length;
    (edited[4] as { content: Array<{ text: string }> }).content[0]!.text = 'x'.repeat(
      sameLength - JSON.stringify(edited[4]).length + 1,
    );
    expect(JSON.stringify(edited[4]).length).toBe(sameLength);
    const again = parser.parse(turn(edited));
    expect(again.reused).toBe(4);
    expect(again.value).toEqual(JSON.parse(turn(edited)));
    expect(Object.keys(again.value as object)).toEqual(['model', 'messages', 'system', 'tools']);
    expect((again.value as { tools: unknown }).tools).toBe((first.value as { tools: unknown }).tools);
    // messages added: the members after them are parsed again (their spans hold for their old place only)
    const grown = parser.parse(turn(conversation(7)));
    expect(grown.value).toEqual(JSON.parse(turn(conversation(7))));
    expect((grown.value as { tools: unknown }).tools).not.toBe((first.value as { tools: unknown }).tools);
  });

  it('hands spans that splice exactly after messages were added before the members that follow them', () => {
    // regression: a tool list reused at another place kept the spans of its old place
    const parser = new PrefixParser();
    const turn = (n: number) =>
      JSON.stringify({
        model: 'm',
        messages: conversation(n),
        system: 'be brief',
        tools: [{ name: 'grep' }],
      });
    const edits = () => {
      const e = new JsonEdits();
      e.set(['tools', 0, 'name'], 'find');
      return e;
    };
    for (const n of [3, 5, 7, 7]) {
      const text = turn(n);
      const got = parser.parse(text);
      expect(applyJsonEdits(text, edits(), got.value, got.hints)).toBe(applyJsonEdits(text, edits()));
    }
  });

  it('keeps a __proto__ member after the messages an own member, whatever is reused', () => {
    const parser = new PrefixParser();
    const turn = (n: number) =>
      `{"messages":${JSON.stringify(conversation(n))},"__proto__":{"polluted":true}}`;
    for (const n of [3, 5, 5, 7]) {
      const got = parser.parse(turn(n)) as { value: Record<string, unknown> };
      expect(got.value).toEqual(JSON.parse(turn(n)));
      expect(Object.hasOwn(got.value, '__proto__')).toBe(true);
      expect(Object.getPrototypeOf(got.value)).toBe(Object.prototype);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('stays within its bound, and parses exactly once it has forgotten', () => {
    const parser = new PrefixParser(1000);
    const a = body(conversation(9));
    parser.parse(a);
    const text = body(conversation(11));
    const got = parser.parse(text);
    expect(got.reused).toBe(0);
    expect(got.value).toEqual(JSON.parse(text));
  });

  it('counts every body it keeps of conversations that open alike, and keeps them within its bound', () => {
    // one opening message (one group), then each conversation its own
    const opening = conversation(1);
    const alike = (k: number, n: number) =>
      body([
        ...opening,
        ...conversation(n)
          .slice(1)
          .map((m, i) => (i === 0 ? { ...(m as object), tag: k } : m)),
      ]);
    const parser = new PrefixParser();
    const sizes: number[] = [];
    for (let k = 0; k < 4; k++) {
      parser.parse(alike(k, 9));
      sizes.push(parser.memoryBytes());
    }
    // each body kept is counted: a group grown in place was counted at its first size
    for (let k = 1; k < 4; k++) expect(sizes[k]).toBeGreaterThan(sizes[k - 1]! + alike(k, 9).length);
    // a bound of two bodies' worth keeps the latest two, within it, and the latest still goes on
    const bounded = new PrefixParser(Math.floor(sizes[1]! * 1.2));
    for (let k = 0; k < 4; k++) {
      bounded.parse(alike(k, 9));
      expect(bounded.memoryBytes()).toBeLessThanOrEqual(Math.floor(sizes[1]! * 1.2));
    }
    expect(bounded.memoryBytes()).toBeGreaterThan(sizes[0]!);
    const next = alike(3, 11);
    const got = bounded.parse(next);
    expect(got.reused).toBe(9);
    expect(got.value).toEqual(JSON.parse(next));
  });
});

describe('PrefixParser.parseBytes', () => {
  it('decodes only the bytes after the repeated messages, giving exactly the decoded text and its parse', () => {
    const parser = new PrefixParser();
    let before: unknown[] | undefined;
    for (const n of [3, 6, 10, 10, 15]) {
      // characters beyond Latin-1 (two-byte strings, multi-byte UTF-8) in the messages
      const messages = conversation(n).map((m, i) =>
        i % 3 === 0 ? { ...(m as object), note: '✓ ❯ ⎯ → 日本' } : m,
      );
      const raw = Buffer.from(body(messages, { tools: [{ name: 'grep' }] }));
      const got = parser.parseBytes(raw);
      expect(got.text).toBe(raw.toString('utf8'));
      expect(got.value).toEqual(JSON.parse(got.text));
      const parsed = (got.value as { messages: unknown[] }).messages;
      if (before) {
        expect(got.reused).toBe(before.length);
        expect(parsed[0]).toBe(before[0]);
      }
      before = parsed;
    }
  });

  it('reuses the earlier body behind a long system prompt (a head read in growing pieces), exactly', () => {
    for (const systemChars of [100, 6_000, 30_000, 70_000]) {
      const parser = new PrefixParser();
      // non-ASCII in the system prompt: the head is scanned as bytes, not decoded
      const system = '日本 ✓ '.repeat(systemChars / 6);
      const first = Buffer.from(body(conversation(4), { system }));
      parser.parseBytes(first);
      const again = parser.parseBytes(Buffer.from(body(conversation(6), { system })));
      expect(again.text).toBe(body(conversation(6), { system }));
      // (past HEAD_BYTES of bytes before the first message's end, found by the decoded text's key)
      expect(again.reused).toBe(4);
      // the same body again: the same text object, reused whole
      const same = parser.parseBytes(Buffer.from(body(conversation(6), { system })));
      expect(same.text).toBe(again.text);
      expect(same.value).toEqual(JSON.parse(same.text));
      expect(same.reused).toBe(6);
    }
  });

  it('reuses up to the message the client changed (byte comparison)', () => {
    const parser = new PrefixParser();
    parser.parseBytes(Buffer.from(body(conversation(21, 19))));
    const raw = Buffer.from(body(conversation(25, 23)));
    const got = parser.parseBytes(raw);
    expect(got.reused).toBe(19);
    expect(got.text).toBe(raw.toString('utf8'));
    expect(got.value).toEqual(JSON.parse(got.text));
  });

  it('parses whole the bodies of other conversations that open with the same message, and reuses within each', () => {
    const parser = new PrefixParser();
    const run = (seed: string, n: number) =>
      conversation(n).map((m, i) => (i === 0 ? m : { ...(m as object), run: seed }));
    const a = Buffer.from(body(run('a', 20)));
    parser.parseBytes(a);
    // the same first message, then another run of the task: nothing reused, the same parse as whole
    const b = Buffer.from(body(run('b', 20)));
    const gotB = parser.parseBytes(b);
    expect(gotB.reused).toBe(0);
    expect(gotB.text).toBe(b.toString('utf8'));
    expect(gotB.value).toEqual(JSON.parse(gotB.text));
    // each run's next turn still goes on from its own body
    for (const [seed, before] of [
      ['a', a],
      ['b', b],
    ] as const) {
      const next = parser.parseBytes(Buffer.from(body(run(seed, 24))));
      expect(next.reused, `${seed} after ${before.length} bytes`).toBe(20);
      expect(next.value).toEqual(JSON.parse(next.text));
    }
  });

  it('decodes invalid UTF-8 exactly as toString does (and then reuses by text only)', () => {
    const parser = new PrefixParser();
    const bad = (n: number) => {
      const text = body(conversation(n));
      const at = text.indexOf('line');
      // a lone continuation byte inside the first tool output
      return Buffer.concat([
        Buffer.from(text.slice(0, at)),
        Buffer.from([0x80]),
        Buffer.from(text.slice(at)),
      ]);
    };
    for (const n of [5, 9]) {
      const raw = bad(n);
      const got = parser.parseBytes(raw);
      expect(got.text).toBe(raw.toString('utf8'));
      expect(got.value).toEqual(JSON.parse(raw.toString('utf8')));
      expect(got.reused).toBe(n === 9 ? 5 : 0);
    }
  });

  it('parses a body whose first message ends beyond the decoded head', () => {
    const parser = new PrefixParser();
    for (const n of [3, 5]) {
      const messages = [{ role: 'user', content: 'x'.repeat(70_000) }, ...conversation(n).slice(1)];
      const raw = Buffer.from(body(messages));
      const got = parser.parseBytes(raw);
      expect(got.text).toBe(raw.toString('utf8'));
      expect(got.value).toEqual(JSON.parse(got.text));
      expect(got.reused).toBe(n === 5 ? 3 : 0);
    }
  });
});

describe('PrefixParser.knownBytes', () => {
  /** `raw` cut into pieces of `size` bytes, as a socket delivers a body. */
  const pieces = (raw: Buffer, size: number) =>
    Array.from({ length: Math.ceil(raw.length / size) }, (_, i) => raw.subarray(i * size, (i + 1) * size));

  it('gives the bytes of a kept body equal to the pieces, compared piece by piece', () => {
    const parser = new PrefixParser();
    const raw = Buffer.from(body(conversation(40)));
    parser.parseBytes(raw);
    const copy = Buffer.from(raw);
    expect(parser.knownBytes(pieces(copy, 4096), copy.length)).toBe(raw);
    // and parsing those bytes gives the kept parse
    const first = parser.parseBytes(raw);
    expect(parser.parseBytes(parser.knownBytes(pieces(copy, 1000), copy.length)!).value).toBe(first.value);
  });

  it('gives nothing for a body that differs in any byte, or in length', () => {
    const parser = new PrefixParser();
    const raw = Buffer.from(body(conversation(40)));
    parser.parseBytes(raw);
    for (const at of [10, raw.length >> 1, raw.length - 2]) {
      const changed = Buffer.from(raw);
      changed[at] = changed[at]! ^ 1;
      expect(parser.knownBytes(pieces(changed, 4096), changed.length)).toBeUndefined();
    }
    const longer = Buffer.concat([raw, Buffer.from(' ')]);
    expect(parser.knownBytes(pieces(longer, 4096), longer.length)).toBeUndefined();
    expect(parser.knownBytes([], 0)).toBeUndefined();
  });
});
