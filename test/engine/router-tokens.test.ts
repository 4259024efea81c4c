import { get_encoding } from 'tiktoken';
import { describe, expect, it } from 'vitest';
import { compressMessages } from '../../src/engine/index.js';
import { detectContentType } from '../../src/engine/router.js';
import { encodingForModel, mayHaveLongRun, tokenizerFor } from '../../src/engine/tokens.js';
import type { ChatMessage } from '../../src/engine/types.js';
import { rng } from './helpers.js';

const repeat = (line: (i: number) => string, n = 20) =>
  Array.from({ length: n }, (_, i) => line(i)).join('\n');

describe('detectContentType', () => {
  it.each([
    ['json document', '{"a": [1, 2, 3], "b": {"c": true}}', 'json'],
    ['json after a status line', 'HTTP 200\n[{"id": 1}, {"id": 2}]', 'json'],
    ['json lines', '{"level":30,"msg":"a"}\n{"level":50,"msg":"b"}', 'json'],
    ['numbered listing of json lines', repeat((i) => `${String(i + 1).padStart(6)}→{"n":${i}}`), 'json'],
    ['unified diff', 'diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n c', 'diff'],
    ['html page', '<!DOCTYPE html><html><body><p>hi</p></body></html>', 'html'],
    ['grep -n output', repeat((i) => `src/mod${i % 3}.ts:${i + 1}:  const x = ${i};`), 'search'],
    ['file list', repeat((i) => `/home/me/project/lib/file_${i}.ex`), 'search'],
    [
      'timestamped log',
      repeat((i) => `2025-01-01T00:00:${String(i).padStart(2, '0')}Z INFO tick ${i}`),
      'log',
    ],
    [
      'stack trace',
      `Exception in thread "main" java.lang.Error\n${repeat((i) => `\tat com.example.C${i}.run(C${i}.java:${i})`)}`,
      'log',
    ],
    [
      'kubectl table',
      `NAME      READY   STATUS    AGE\n${repeat((i) => `pod-${i}     1/1     Running   3d`)}`,
      'table',
    ],
    [
      'numbered source file',
      repeat((i) => `${String(i + 1).padStart(6)}→  value_${i} = compute(${i})`),
      'code',
    ],
    [
      'source code',
      repeat((i) => (i % 4 === 0 ? `function f${i}(a) {` : i % 4 === 3 ? '}' : `  const v${i} = a + ${i};`)),
      'code',
    ],
    [
      'prose',
      repeat(() => 'The service retries each request until the upstream answers or the deadline passes.', 8),
      'prose',
    ],
    ['key: value listing', repeat((i) => `Field${i}:   value ${i}`), 'text'],
  ])('%s -> %s', (_name, text, type) => {
    expect(detectContentType(text)).toBe(type);
  });
});

describe('token counting', () => {
  it('picks the encoding per model family; Claude and unknown models are estimates', () => {
    expect(encodingForModel('gpt-4o')).toEqual({ encoding: 'o200k_base', exact: true });
    expect(encodingForModel('o3-mini')).toEqual({ encoding: 'o200k_base', exact: true });
    expect(encodingForModel('gpt-4-turbo')).toEqual({ encoding: 'cl100k_base', exact: true });
    expect(encodingForModel('gpt-3.5-turbo')).toEqual({ encoding: 'cl100k_base', exact: true });
    expect(encodingForModel('claude-sonnet-4')).toEqual({ encoding: 'o200k_base', exact: false });
  });

  it('counts exactly what tiktoken counts, with message and tool-call overhead', () => {
    const text = 'Compress the context, keep the evidence: pod-7f9c ERR_TIMEOUT at 12:00.';
    for (const [model, encoding] of [
      ['gpt-4o', 'o200k_base'],
      ['gpt-4', 'cl100k_base'],
    ] as const) {
      const enc = get_encoding(encoding);
      const n = enc.encode_ordinary(text).length;
      const args = '{"pod":"pod-7f9c"}';
      const a = enc.encode_ordinary(args).length;
      const name = enc.encode_ordinary('logs').length;
      enc.free();
      const tok = tokenizerFor(model);
      expect(tok.countText(text)).toBe(n);
      // 3 to prime the reply, 3 per message, 3 per tool call plus its name and arguments
      expect(
        tok.countMessages([
          { role: 'user', content: text },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'logs', arguments: args } }],
          },
        ]),
      ).toBe(3 + 3 + n + 3 + 3 + name + a);
    }
  });

  it('estimates Claude as o200k plus 10%', () => {
    const text = 'x'.repeat(10) + ' hello world '.repeat(50);
    const exact = tokenizerFor('gpt-4o').countText(text);
    const est = tokenizerFor('claude-opus-4');
    expect(est.exact).toBe(false);
    expect(est.encoding).toBe('estimate');
    expect(est.countText(text)).toBe(Math.ceil(exact * 1.1));
  });
});

describe('pathological inputs (regression: a 2 MB line without separators stalled BPE and the grep detector)', () => {
  it('counts and compresses huge runs in bounded time', () => {
    const tok = tokenizerFor('gpt-4o');
    const run = 'x'.repeat(256 * 800);
    // counted in 256-character slices of 32 tokens each
    expect(tok.countText(`start ${run}`)).toBe(tok.countText('start ') + 800 * 32);
    expect(detectContentType(`${run}\n${run}`)).toBe('text');
  });
});

describe('the long-run check before counting', () => {
  /** What the counter slices: runs of 1024+ letters/marks, whitespace or symbols. */
  const LONG_RUN_RE = /[\p{L}\p{M}]{1024,}|\s{1024,}|[^\s\p{L}\p{N}]{1024,}/u;
  const pieces = ['word ', 'x', '=', ' ', '\n', '7', 'é', '\u0301', '—', '\u00a0', '中', 'ab1 '];

  it('never misses a run the regex finds, wherever it starts', () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return Math.floor((seed / 2 ** 32) * n);
    };
    let runs = 0;
    for (let k = 0; k < 400; k++) {
      let text = '';
      while (text.length < 6000) {
        const piece = pieces[random(pieces.length)]!;
        // now and then a run of one piece, around the 1024 threshold
        text += random(8) === 0 ? piece.repeat(Math.ceil((1000 + random(60)) / piece.length)) : piece;
      }
      const found = LONG_RUN_RE.test(text);
      if (found) {
        runs++;
        expect(mayHaveLongRun(text)).toBe(true);
      }
    }
    expect(runs).toBeGreaterThan(20);
  });

  it('passes ordinary text without a closer look', () => {
    const prose = 'The quick brown fox jumps over the lazy dog. '.repeat(200);
    const code = '  const value = compute(items[i], 42);\n'.repeat(200);
    expect(mayHaveLongRun(prose)).toBe(false);
    expect(mayHaveLongRun(code)).toBe(false);
    expect(mayHaveLongRun(`${prose}${'='.repeat(1024)}`)).toBe(true);
    expect(mayHaveLongRun(`${code}${' '.repeat(1030)}x`)).toBe(true);
  });
});

describe('cheap bounds of a count', () => {
  it('atLeast <= countText <= atMost, exact and estimated, special-token text as plain text', () => {
    const texts = [
      'plain words and 12345 numbers',
      '{"id": 17, "name": "widget", "tags": ["a", "b"]}\n'.repeat(40),
      'héllo 世界 🎉 — ünïcödé',
      'a <|endoftext|> b',
      ' '.repeat(3000),
    ];
    for (const model of ['gpt-4o', 'claude-sonnet-4-5']) {
      const tok = tokenizerFor(model);
      for (const text of texts) {
        const pre = tok.preTokens!(text);
        const n = tok.countText(text);
        expect(tok.atLeast!(text)).toBeLessThanOrEqual(n);
        expect(tok.atMost!(text)).toBeGreaterThanOrEqual(n);
        // pre-tokens: at most the count, the same once the text has been counted, capped on request
        expect(pre).toBeLessThanOrEqual(n);
        expect(pre).toBeGreaterThan(0);
        expect(tok.preTokens!(text)).toBe(pre);
        expect(tok.preTokens!(`${text} `)).toBeGreaterThanOrEqual(pre);
        expect(tok.preTokens!(text, 2)).toBeGreaterThanOrEqual(Math.min(2, pre));
      }
      // a wall of whitespace is one pre-token to the split, and counted in slices like its tokens
      expect(tok.preTokens!(' '.repeat(3000))).toBeGreaterThan(10);
      const messages = [{ role: 'user' as const, content: texts.join('\n') }];
      expect(tok.countMessagesAtMost!(messages)).toBeGreaterThanOrEqual(tok.countMessages(messages));
      // with a bound to stay within: the bytes alone when they are within it, else tightened by the
      // counts known (a new message whose text was just counted), and an upper bound either way
      const again = [{ role: 'user' as const, content: messages[0]!.content }];
      const bytes = tok.countMessagesAtMost!(again, Number.MAX_SAFE_INTEGER);
      const tight = tok.countMessagesAtMost!(again, 0);
      expect(tight).toBe(tok.countMessagesAtMost!(again));
      expect(tight).toBeLessThan(bytes);
      expect(tight).toBeGreaterThanOrEqual(tok.countMessages(messages));
    }
  });

  it('pre-tokens asked for in turns, each time more of one text, give the count from the start', () => {
    // two texts taken in turns, as the router asks (big enough, then worth it); a count stopped at
    // its cap goes on from where it stopped, and must find the chunks a whole count finds
    const original = 'const value = compute(items[i], 42); // → héllo 世界\n'.repeat(60);
    const compressed = 'const value = compute(items[i], 42);\n'.repeat(20);
    const third = 'another text, asked for in between\n'.repeat(10);
    for (const model of ['gpt-4o', 'claude-sonnet-4-5']) {
      const tok = tokenizerFor(model);
      const whole = [original, compressed, third].map((t) => {
        tok.preTokens!(`${t}!`); // a text in between: no count of t is kept
        tok.preTokens!(`${t}?`);
        return tok.preTokens!(t);
      });
      for (const t of ['x', 'y']) tok.preTokens!(t);
      for (const cap of [7, 150, 151, 400]) {
        expect(tok.preTokens!(original, cap)).toBeGreaterThanOrEqual(Math.min(cap, whole[0]!));
        expect(tok.preTokens!(compressed, cap)).toBeGreaterThanOrEqual(Math.min(cap, whole[1]!));
      }
      expect(tok.preTokens!(original)).toBe(whole[0]);
      expect(tok.preTokens!(compressed)).toBe(whole[1]);
      // a capped count below the whole is the cap itself (where counts are exact)
      tok.preTokens!(third, 5);
      if (tok.exact) expect(tok.preTokens!(third, 5)).toBe(5);
      if (tok.exact) expect(tok.preTokens!(third, 11)).toBe(11);
      expect(tok.preTokens!(third)).toBe(whole[2]);
    }
  });
});

describe('worth it, judged on pre-tokens', () => {
  /**
   * Pretty-printed JSON whose long random ids are several tokens per pre-token: minifying it
   * saves more of its pre-tokens than of its tokens (with the defaults, 12% against under 9%).
   */
  function prettyJson(seed = 4812, idLength = 48): string {
    const random = rng(seed);
    const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    const id = () => Array.from({ length: idLength }, () => chars[Math.floor(random() * 62)]).join('');
    const doc: Record<string, unknown> = {
      id: 1,
      node_id: id(),
      owner: { login: 'fixture-org', node_id: id() },
    };
    for (let k = 0; k < 12; k++) doc[`key_${k}`] = { sha: id(), url: `https://example.test/${id()}/${id()}` };
    return JSON.stringify(doc, null, 2);
  }
  const session = (text: string): ChatMessage[] => [
    { role: 'user', content: 'show the repository' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'a', type: 'function', function: { name: 'get_repo', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'a', content: text },
    { role: 'user', content: 'ok' },
  ];

  it('uses a form that saves 10% of the pre-tokens, whatever its exact count saves', () => {
    const text = prettyJson();
    const minified = JSON.stringify(JSON.parse(text));
    const tok = tokenizerFor('gpt-4o');
    const [pre, preAfter] = [tok.preTokens!(text), tok.preTokens!(minified)];
    const [n, nAfter] = [tok.countText(text), tok.countText(minified)];
    expect(pre - preAfter).toBeGreaterThanOrEqual(pre * 0.1);
    expect(n - nAfter).toBeLessThan(n * 0.1);
    const out = compressMessages(session(text), { model: 'gpt-4o', lossless: true });
    expect(out.result.messages[2]!.content).toBe(minified);
  });

  it('judges on exact counts for a model whose tokenizer has no pre-tokens (cl100k_base)', () => {
    const text = prettyJson();
    const tok = tokenizerFor('gpt-4');
    expect(tok.preTokens).toBeUndefined();
    // under cl100k_base minifying saves 9% of the tokens: not enough
    expect(tok.countText(text) - tok.countText(JSON.stringify(JSON.parse(text)))).toBeLessThan(
      tok.countText(text) * 0.1,
    );
    const out = compressMessages(session(text), { model: 'gpt-4', lossless: true });
    expect(out.result.messages[2]!.content).toBe(text);
  });

  it('decides the same whatever was counted before', () => {
    // around the threshold, where a count and the pre-tokens give different answers
    const texts = Array.from({ length: 12 }, (_, k) => prettyJson(900 + k, 30 + 3 * k));
    const cold = texts.map((t) => compressMessages(session(t), { model: 'gpt-4o', lossless: true }).result);
    const tok = tokenizerFor('gpt-4o');
    for (const t of texts) {
      tok.countText(t);
      tok.countText(JSON.stringify(JSON.parse(t)));
    }
    const warm = texts.map((t) => compressMessages(session(t), { model: 'gpt-4o', lossless: true }).result);
    expect(warm.map((r) => r.messages)).toEqual(cold.map((r) => r.messages));
  });
});
