import { describe, expect, it } from 'vitest';
import { engineMemoBytes } from '../../src/engine/memo-budget.js';
import { applyJsonEdits, JsonEdits, valueEnd } from '../../src/json/spans.js';

const DOC = `{
  "model": "m",
  "n": 12345678901234567890,
  "f": 1.50,
  "messages": [
    {"role": "user", "content": "caf\\u00e9 \\"quoted\\" \\\\"},
    { "role" : "assistant" , "content" : [ {"type":"text","text":"a"}, {"type":"thinking","thinking":"t","signature":"c2ln/+=="} ] },
    {"role": "user", "content": "last"}
  ],
  "tools": [{"name": "x", "input_schema": {"maximum": 1e400}}]
}`;

describe.each([
  ['scanning the text', () => undefined],
  ['guided by the parsed value', (t: string) => JSON.parse(t)],
] as const)('applyJsonEdits, %s', (_how, parsed) => {
  it('finds value ends across escapes and nesting', () => {
    const s = '"a\\\\" , 1';
    expect(valueEnd(s, 0)).toBe(5);
    expect(valueEnd('[1,[2,"]"],{"}":3}] x', 0)).toBe(19);
    expect(valueEnd('  -1.5e3,', 0)).toBe(8);
  });

  it('with no edits returns the text itself', () => {
    expect(applyJsonEdits(DOC, new JsonEdits(), parsed(DOC))).toBe(DOC);
  });

  it('replaces one nested value and keeps every other byte', () => {
    const edits = new JsonEdits();
    edits.set(['messages', 1, 'content', 0, 'text'], 'B "new"');
    const out = applyJsonEdits(DOC, edits, parsed(DOC));
    expect(out).toBe(DOC.replace('"text":"a"', '"text":"B \\"new\\""'));
    expect(JSON.parse(out).messages[1].content[0].text).toBe('B "new"');
  });

  it('removes and inserts array elements, keeping the other elements byte for byte', () => {
    const edits = new JsonEdits();
    edits.remove(['messages', 0]);
    edits.insert(['messages'], 2, { role: 'user', content: 'marker' });
    edits.set(['messages', 2, 'content'], 'LAST');
    const out = applyJsonEdits(DOC, edits, parsed(DOC));
    expect(out).toContain(
      '[{ "role" : "assistant" , "content" : [ {"type":"text","text":"a"}, {"type":"thinking","thinking":"t","signature":"c2ln/+=="} ] },{"role":"user","content":"marker"},{"role": "user", "content": "LAST"}]',
    );
    expect(out).toContain('"n": 12345678901234567890');
    expect(out).toContain('"maximum": 1e400');
    expect(out.startsWith('{\n  "model": "m",')).toBe(true);
  });

  it('adds object members after the existing ones', () => {
    const edits = new JsonEdits();
    edits.addMember([], 'tool_choice', { type: 'auto' });
    edits.addMember(['messages', 2], 'name', 'x');
    const out = applyJsonEdits(DOC, edits, parsed(DOC));
    const body = JSON.parse(out);
    expect(Object.keys(body).at(-1)).toBe('tool_choice');
    expect(body.messages[2]).toEqual({ role: 'user', content: 'last', name: 'x' });
    const empty = new JsonEdits();
    empty.addMember([], 'a', 1);
    expect(applyJsonEdits('{ }', empty, parsed('{ }'))).toBe('{"a":1}');
  });

  it('copes with duplicate keys and non-standard escapes', () => {
    const doc = '{"a": {"x": 1}, "a": ["\\u0041", "B"], "b": "caf\\u00e9", "c": "z"}';
    const edits = new JsonEdits();
    edits.set(['c'], 'Z');
    const out = applyJsonEdits(doc, edits, parsed(doc));
    expect(out).toBe(doc.replace('"c": "z"', '"c": "Z"'));
  });

  it.each([
    ['standard escapes', '"a\\"b\\\\c\\n\\t\\u0001"'],
    ['an escaped quote before a comma, spelled long', '"x\\u0022,\\"y\\",\\"z"'],
    ['slash and unicode escapes', '"caf\\u00e9 \\/ \\u00e9\\u00e9"'],
    ['a surrogate pair, raw and escaped', '"\u{1F600} \\ud83d\\ude00"'],
    ['a lone surrogate escape', '"\\udc00x"'],
    ['trailing backslashes', '"a\\\\\\\\"'],
  ])('finds the end of a string with %s', (_name, spelled) => {
    const doc = `{"m": [{"content": ${spelled}, "k": "v"}, {"content": "last"}], "z": ${spelled}}`;
    const edits = new JsonEdits();
    edits.set(['m', 0, 'k'], 'V');
    edits.set(['m', 1, 'content'], 'LAST');
    const out = applyJsonEdits(doc, edits, parsed(doc));
    expect(out).toBe(doc.replace('"k": "v"', '"k": "V"').replace('"last"', '"LAST"'));
  });

  it('throws for a path that does not exist', () => {
    const edits = new JsonEdits();
    edits.set(['messages', 9, 'content'], 'x');
    expect(() => applyJsonEdits(DOC, edits, parsed(DOC))).toThrow(RangeError);
  });
});

describe('long strings: found in the text the first time, skipped by their measured length after (issue 19)', () => {
  const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

  it.each([
    ['spelled as JSON.stringify does', (s: string) => JSON.stringify(s)],
    // \u0022 for each quote: longer than the shortest spelling, and holding no raw quote
    ['spelled long, quotes as \\u0022', (s: string) => JSON.stringify(s).replace(/\\"/g, '\\u0022')],
  ])('%s', async (name, spell) => {
    const long = `${name}: a "quoted" word, a \\ backslash, caf\u00e9 and a tab\t. `.repeat(40);
    expect(long.length).toBeGreaterThan(256);
    const doc = `{"m": [{"content": ${spell(long)}, "k": "v"}, {"content": "last"}]}`;
    const edit = () => {
      const edits = new JsonEdits();
      edits.set(['m', 0, 'k'], 'V');
      edits.set(['m', 1, 'content'], 'LAST');
      return applyJsonEdits(doc, edits, JSON.parse(doc));
    };
    const expected = doc.replace('"k": "v"', '"k": "V"').replace('"last"', '"LAST"');
    const before = engineMemoBytes().spelled_lengths;
    expect(edit()).toBe(expected);
    // not measured on the request's path...
    expect(engineMemoBytes().spelled_lengths).toBe(before);
    await tick();
    // ...but right after, for the turns that come next, which find the same bytes
    expect(engineMemoBytes().spelled_lengths).toBeGreaterThan(before);
    expect(edit()).toBe(expected);
  });
});
