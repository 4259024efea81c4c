import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { extractIdentifiers } from '../../src/engine/identifiers.js';
import { LineSet, lineKey, MIN_LINE_CHARS, NameSet } from '../../src/engine/known.js';
import { IDENTIFIER_PIECES, randomString, rng } from './helpers.js';

/** Longer than a chunk of the compiled scans (16,384 characters). */
const LONG = 40_000;

/** Texts with runs and lines of every kind, some longer than a chunk, some crossing one. */
function texts(seed: number): string[] {
  const rand = rng(seed);
  const alphabet = [
    ...IDENTIFIER_PIECES,
    '\n',
    '\n',
    '\t',
    '\r',
    'é',
    '→',
    '\u00a0',
    '\u3000',
    '\ufeff',
    '\u2028',
    '(',
    '"',
    '12→',
    '  3\t',
    'x1.y2',
    'pod-7f9c',
  ];
  const out = Array.from({ length: 300 }, () => randomString(rand, alphabet, Math.floor(rand() * 400)));
  out.push(
    // one run longer than a chunk, with and without a mark, and ending in punctuation
    `${'ab'.repeat(LONG / 2)}1 tail`,
    `${'ab'.repeat(LONG / 2)} plain`,
    `x${'9'.repeat(LONG)}.:-`,
    // a run that ends exactly at, or right after, a chunk's end
    `${'q'.repeat(16_383)} abc/def1 ${'w'.repeat(16_379)}x1234 end`,
    // one line longer than a chunk, among short ones
    `short line one\n${'   17→  '}${'word '.repeat(LONG / 5)}\t\nlast line here`,
    // many lines across several chunks
    Array.from({ length: 9000 }, (_, i) => `  ${i}→ line ${i % 700} of the file`).join('\n'),
  );
  return out;
}

describe('the history as hashes (known.ts)', () => {
  it('a NameSet holds the identifiers extractIdentifiers finds, and nothing else it was asked about', () => {
    const all = texts(3);
    const names = new NameSet();
    const expected = new Set<string>();
    for (const text of all) {
      names.addText(text);
      for (const id of extractIdentifiers(text)) expected.add(id);
    }
    expect(expected.size).toBeGreaterThan(800);
    expect(names.size).toBe(expected.size);
    for (const id of expected) expect(names.has(id)).toBe(true);
    // near misses: a character more or less, and runs the scan must not take (no mark, too short)
    let probes = 0;
    for (const id of expected) {
      for (const probe of [`${id}x`, id.slice(1), id.slice(0, -1)]) {
        if (expected.has(probe)) continue;
        probes++;
        expect(names.has(probe)).toBe(false);
      }
    }
    expect(probes).toBeGreaterThan(2000);
    for (const miss of ['abcdef', 'ab1', 'ab'.repeat(LONG / 2), 'tail', 'plain'])
      expect(names.has(miss)).toBe(false);
  });

  it('a LineSet holds the line keys of the texts (lineKey, at least MIN_LINE_CHARS), and nothing else', () => {
    const all = texts(4);
    const lines = new LineSet();
    const expected = new Set<string>();
    for (const text of all) {
      lines.addText(text);
      for (const line of text.split('\n')) {
        const key = lineKey(line);
        if (key.length >= MIN_LINE_CHARS) expected.add(key);
      }
    }
    expect(expected.size).toBeGreaterThan(1000);
    expect(lines.size).toBe(expected.size);
    for (const key of expected) expect(lines.has(key)).toBe(true);
    for (const key of expected) {
      for (const probe of [`${key}x`, key.slice(1), ` ${key}`]) {
        if (!expected.has(probe)) expect(lines.has(probe)).toBe(false);
      }
    }
  });

  it('every committed WebAssembly module is what its .wat compiles to (rebuild: node scripts/build-wasm.js)', () => {
    const script = new URL('../../scripts/build-wasm.js', import.meta.url).pathname;
    const run = spawnSync(process.execPath, [script, '--check'], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });
});
