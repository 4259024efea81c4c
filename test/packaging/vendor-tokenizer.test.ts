import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { randomString, rng } from '../engine/helpers.js';

/**
 * The tokenizers the built package counts with (dist/vendor, written by
 * scripts/bundle-vendor.js: gpt-tokenizer's encoder over a prebuilt rank
 * index) against gpt-tokenizer itself, which the other tests use: same
 * tokens, counts and decoded text, for every token of both vocabularies and
 * for the sample fixtures.
 */
const ROOT = join(import.meta.dirname, '../..');
const VENDOR = join(ROOT, 'dist/vendor');

interface Encoding {
  countTokens(text: string, options?: { disallowedSpecial?: Set<string> }): number;
  encode(text: string): number[];
  decode(tokens: number[]): string;
}

const texts: string[] = [
  'héllo 世界 🎉🎉 \u0000 \ud800 lone surrogate',
  ' '.repeat(3000),
  'aaaa'.repeat(500),
  ...readdirSync(join(ROOT, 'fixtures/samples'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => readFileSync(join(ROOT, 'fixtures/samples', f), 'utf8')),
];

let vendored: Record<'o200k_base' | 'cl100k_base', Encoding>;
let original: Record<'o200k_base' | 'cl100k_base', Encoding>;

beforeAll(async () => {
  // `npm test` builds first (pretest); when this file runs alone, build now.
  if (!existsSync(join(VENDOR, 'o200k_base.index'))) {
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
  }
  const require = createRequire(import.meta.url);
  vendored = {
    o200k_base: (await import(pathToFileURL(join(VENDOR, 'o200k_base.js')).href)) as Encoding,
    cl100k_base: require(join(VENDOR, 'cl100k_base.cjs')) as Encoding,
  };
  // Each from its own module: gpt-tokenizer's decoder keeps streaming state across calls.
  original = {
    o200k_base: require('gpt-tokenizer/cjs/encoding/o200k_base') as Encoding,
    cl100k_base: require('gpt-tokenizer/cjs/encoding/cl100k_base') as Encoding,
  };
}, 300_000);

describe.each(['o200k_base', 'cl100k_base'] as const)('vendored %s', (name) => {
  it('encodes, counts and decodes the samples as gpt-tokenizer does', () => {
    for (const text of texts) {
      const tokens = original[name].encode(text);
      expect(vendored[name].encode(text)).toEqual(tokens);
      expect(vendored[name].countTokens(text)).toBe(tokens.length);
      expect(vendored[name].decode(tokens)).toBe(original[name].decode(tokens));
    }
  });

  it("counts chunks of several tokens as gpt-tokenizer's BPE merges them", () => {
    // The count merges each chunk's UTF-8 bytes itself (bundle-vendor.js, mergeCount): pairs
    // within one character (found among the tokens that are not valid UTF-8), pairs of whole
    // characters, astral ones, ties between equal pairs; a lone surrogate goes to gpt-tokenizer.
    const pieces = ['é', 'ß', 'Ж', 'λ', '中', '語', '한', '→', '—', '…', '⎯', '─', '✓', '❯', '·', '©'];
    const alphabet = [
      ...pieces,
      '😀',
      '🎉',
      '👍🏽',
      '\u0301',
      '\u200b',
      '\ud800',
      '\udfff',
      'ab',
      'Q',
      '7',
      ' ',
      '_',
      '/',
    ];
    const random = rng(23);
    const fuzz = Array.from({ length: 4000 }, () =>
      randomString(random, alphabet, 1 + Math.floor(random() * 40)),
    );
    const runs = pieces.map((c, i) => c.repeat(5 + 17 * i));
    // equal pairs merge leftmost first: taken rightmost first, these count otherwise
    const ties = ['ee-eeeeee', 'ba'.repeat(11), 'baeebaeeeebabababa', 'abeeeeeeeeeeabeeeeeeabee'];
    const ascii = [...ties, 'xQzzkpwvXQZZKPWV', '0x7fffffff'.repeat(9), 'd41d8cd98f00b204e9800998ecf8427e'];
    for (const text of [...fuzz, ...runs, ...ascii]) {
      expect(vendored[name].countTokens(text)).toBe(original[name].encode(text).length);
    }
  });

  it('finds every token of the vocabulary by its text, with its rank', async () => {
    const { default: ranks } = (await import(`gpt-tokenizer/bpeRanks/${name}`)) as {
      default: (string | number[])[];
    };
    let checked = 0;
    for (let rank = 0; rank < ranks.length; rank++) {
      const token = ranks[rank];
      if (typeof token !== 'string') continue;
      const tokens = vendored[name].encode(token);
      if (tokens.length !== 1 || tokens[0] !== rank) {
        // Not one token: gpt-tokenizer's pre-tokenizer splits it the same way.
        expect(tokens).toEqual(original[name].encode(token));
      }
      checked++;
    }
    expect(checked).toBeGreaterThan(90_000);
    // The tokens that are text (byte-array tokens, the pieces of UTF-8 sequences, are decoded in
    // the samples above: alone they leave gpt-tokenizer's streaming decoder mid-sequence).
    const text = ranks.flatMap((token, rank) => (typeof token === 'string' ? [rank] : []));
    expect(vendored[name].decode(text)).toBe(original[name].decode(text));
    expect(vendored[name].decode(text)).toBe(ranks.filter((t) => typeof t === 'string').join(''));
  });
});

describe("o200k_base's chunker", () => {
  /**
   * The vendored o200k_base finds its pre-tokens with its own chunker
   * (scripts/vendor/o200k-chunks.js: ASCII, and characters beyond it of one
   * class alone) and gpt-tokenizer's split regex only where a deciding
   * character is neither: the chunks must be the regex's, in every case, or
   * counts would drift.
   */
  const alphabet = [
    'a',
    'Z',
    'b',
    'Q',
    'x',
    '1',
    '9',
    '0',
    ' ',
    '  ',
    '\t',
    '\n',
    '\r\n',
    '\r',
    '\v',
    '\f',
    "'",
    "'s",
    "'LL",
    "'ve",
    "'Re",
    "'d",
    '/',
    '(',
    ')',
    '.',
    '-',
    '_',
    '"',
    '{',
    '}',
    'é',
    'É',
    '—',
    '\u00a0',
    '\u3000',
    '²',
    '٣',
    'x\u0301',
    'ﬁ',
    '😀',
    '\u0000',
    '\u001f',
    '\u007f',
    '\u2028',
    'ǅ',
    'ʰ',
    '中',
    // found by the chunker's table of characters beyond ASCII (symbols, one-case letters, spaces)
    '→',
    '│',
    '·',
    '✓',
    '├',
    'Ω',
    'ß',
    '½',
    '\u2009',
    '\ufeff',
    '\u0085',
  ];

  function regexChunks(regex: RegExp, text: string): string[] {
    regex.lastIndex = 0;
    return [...text.matchAll(regex)].map((m) => m[0]);
  }

  it("splits text exactly as gpt-tokenizer's split regex does", async () => {
    const require = createRequire(import.meta.url);
    const api = require('gpt-tokenizer/cjs/encoding/o200k_base').default as {
      bytePairEncodingCoreProcessor: { tokenSplitRegex: RegExp };
    };
    const source = api.bytePairEncodingCoreProcessor.tokenSplitRegex;
    const regex = new RegExp(source.source, source.flags);
    const { sumChunks, countChunks, countChunksFrom } = (await import(
      pathToFileURL(join(VENDOR, 'o200k_base.js')).href
    )) as {
      sumChunks(text: string, regex: RegExp, each: (chunk: string) => number): number;
      countChunks(text: string, enough?: number): number;
      countChunksFrom(text: string, from: number, enough?: number): [number, number];
    };
    const { generateSession } = await import('../../fixtures/generate.js');
    const session = JSON.stringify(generateSession(20_000, 5));
    let seed = 19;
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const fuzz = Array.from({ length: 30_000 }, () =>
      randomString(random, alphabet, 1 + Math.floor(random() * 24)),
    );
    let asciiChunks = 0;
    for (const text of [...texts, session, ...fuzz]) {
      const chunks: string[] = [];
      sumChunks(text, regex, (chunk) => chunks.push(chunk));
      expect(chunks).toEqual(regexChunks(regex, text));
      asciiChunks += chunks.length;
      // every pre-token is at least one token: the router's lower bound
      expect(countChunks(text)).toBe(chunks.length);
      // with a cap it stops there: at least the cap, or all of them when there are fewer
      expect(countChunks(text, 5)).toBe(Math.min(chunks.length, 5));
      // a count stopped at its cap stops at the end of its last chunk, and goes on from there
      const [first, stop] = countChunksFrom(text, 0, 5);
      expect(first).toBe(Math.min(chunks.length, 5));
      expect(stop).toBe(chunks.slice(0, first).join('').length);
      const [rest, end] = countChunksFrom(text, stop);
      expect(first + rest).toBe(chunks.length);
      expect(end).toBe(text.length);
      expect(countChunks(text)).toBeLessThanOrEqual(
        vendored.o200k_base.countTokens(text, { disallowedSpecial: new Set() }),
      );
    }
    expect(asciiChunks).toBeGreaterThan(100_000);
    // the count runs compiled over windows of 32,768 characters: texts across several of them,
    // with chunks that cross a window's end (a letter run, white space, a contraction, symbols)
    const long = [
      Array.from({ length: 30_000 }, () => alphabet[Math.floor(random() * alphabet.length)]).join(''),
      `${'word '.repeat(6553)}abc${'x'.repeat(40_000)}'ll and`,
      `${' '.repeat(32_766)}\n\n${' '.repeat(40_000)}end`,
      `${'a'.repeat(32_767)}'ve ${'-'.repeat(32_768)}//\n${'9'.repeat(70_001)}`,
    ];
    for (const text of long) {
      const all = regexChunks(regex, text);
      expect(text.length).toBeGreaterThan(32_768);
      expect(countChunks(text)).toBe(all.length);
      // the token count looks its chunks up in the same compiled pass
      expect(vendored.o200k_base.countTokens(text)).toBe(original.o200k_base.countTokens(text));
      for (const cap of [1, 7, 1000, all.length - 1].filter((c) => c < all.length)) {
        const [first, stop] = countChunksFrom(text, 0, cap);
        expect(first).toBe(cap);
        expect(stop).toBe(all.slice(0, cap).join('').length);
        expect(countChunksFrom(text, stop)).toEqual([all.length - cap, text.length]);
      }
    }
    for (const text of fuzz.slice(0, 3000))
      expect(vendored.o200k_base.countTokens(text)).toBe(original.o200k_base.countTokens(text));
    expect(vendored.o200k_base.countTokens(session)).toBe(original.o200k_base.countTokens(session));
    // ... and the counts above were the compiled pass's, not the JavaScript's
    const chunker = (await import(pathToFileURL(join(VENDOR, 'o200k-chunks.js')).href)) as {
      countsCompiled(): boolean;
    };
    expect(chunker.countsCompiled()).toBe(true);
  });
});
