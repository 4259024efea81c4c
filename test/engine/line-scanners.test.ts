import { describe, expect, it } from 'vitest';
import { beginCall, endCall } from '../../src/engine/call-scope.js';
import { isBlank, markRepeatedRuns } from '../../src/engine/compressors/lines.js';
import {
  isNumberedListing,
  NUMBERED_RE,
  numberedMatches,
  numberedNonBlank,
} from '../../src/engine/compressors/listing.js';
import { lineTemplate, lineTemplates } from '../../src/engine/compressors/log.js';
import { History } from '../../src/engine/history.js';
import { lineKey } from '../../src/engine/known.js';
import { detectContentType, isNumberedText } from '../../src/engine/router.js';
import { randomString, rng } from './helpers.js';

/** The template as first written: four replaces in a row (the shape kinds of lines are compared by). */
function referenceTemplate(line: string): string {
  return line
    .slice(0, 400)
    .replace(/"(?:[^"\\]|\\.){0,200}"/g, '"_"')
    .replace(/\b0x[0-9a-f]+\b|\b[0-9a-f]{7,}\b/gi, '#')
    .replace(/\d+/g, '#')
    .replace(/\s+/g, ' ')
    .slice(0, 160);
}

describe('line scanners', () => {
  it('isBlank is `trim() === ""` for every UTF-16 code unit', () => {
    for (let c = 0; c < 0x10000; c++) {
      const ch = String.fromCharCode(c);
      for (const line of [ch, ` ${ch}\t`, `\u3000${ch}`])
        expect([c, isBlank(line)]).toEqual([c, line.trim() === '']);
    }
    expect(isBlank('')).toBe(true);
  });

  it('lineTemplate blanks quotes, hex ids, numbers and whitespace runs as the four replaces did', () => {
    expect(lineTemplate('2025-03-14T09:04:06Z INFO  GET /api/v1/x 200 33ms trace_id=cfbb08a2955fd859')).toBe(
      '#-#-#T#:#:#Z INFO GET /api/v#/x # #ms trace_id=#',
    );
    expect(lineTemplate('job "a \\"b\\" c"\tfailed at 0x1F3a,\u00a0deadbeef')).toBe('job "_" failed at #, #');
    const rand = rng(7);
    const alphabet = [
      '"',
      '\\',
      'a',
      'f',
      'x',
      '0',
      '9',
      '_',
      ' ',
      '\t',
      '\r',
      '\u2028',
      '\u00a0',
      'é',
      'g',
      '-',
    ];
    const lines: string[] = [];
    for (let k = 0; k < 20_000; k++) {
      const line = randomString(rand, alphabet, Math.floor(rand() * (rand() < 0.1 ? 600 : 40)));
      expect(lineTemplate(line)).toBe(referenceTemplate(line));
      lines.push(line);
    }
    // hex ids of both forms and cases, word boundaries, runs across the 160th character
    const richer = [
      ...alphabet,
      'X',
      'F',
      'D',
      'z',
      '0x',
      '0X1f',
      'deadbeef',
      'C0FFEE1',
      '1234567',
      '\ufeff',
      '\u3000',
      '\u2029',
      '"q"',
      '\\"',
    ];
    for (let k = 0; k < 20_000; k++) {
      const line = randomString(rand, richer, Math.floor(rand() * (rand() < 0.2 ? 300 : 30)));
      expect(lineTemplate(line)).toBe(referenceTemplate(line));
      lines.push(line);
    }
    // all lines at once: no quote or blank run reaches into the next line
    for (let k = 0; k < lines.length; k += 7)
      expect(lineTemplates(lines.slice(k, k + 7))).toEqual(lines.slice(k, k + 7).map(referenceTemplate));
    expect(lineTemplates([])).toEqual([]);
  });

  it('markRepeatedRuns marks runs of known lines and long known lines, not short trailing lines', () => {
    const known = ['alpha line one', 'beta line two', 'gamma line three', 'delta line four', 'x'.repeat(250)];
    const lines = ['new line here', ...known.slice(0, 4), '', 'fresh line', 'ok', known[4]!, 'tail'];
    const mask = markRepeatedRuns(lines, new Set(known));
    // four known lines (the blank after them is left out); a short line then a long known one
    expect([...mask]).toEqual([0, 1, 1, 1, 1, 0, 0, 1, 1, 0]);
    expect([...markRepeatedRuns(lines.slice(0, 4), new Set(known))]).toEqual([0, 0, 0, 0]);
    expect([...markRepeatedRuns(lines, new Set())]).toEqual(new Array(lines.length).fill(0));
  });

  it('isNumberedText answers as isNumberedListing of the first 400 lines, before and after detection', () => {
    const listing = Array.from(
      { length: 30 },
      (_, i) => `${String(i + 1).padStart(6)}→const v${i} = ${i};`,
    ).join('\n');
    const plain = Array.from({ length: 30 }, (_, i) => `const v${i} = ${i};`).join('\n');
    const crlf = listing.replaceAll('\n', '\r\n');
    beginCall();
    try {
      for (const text of [listing, plain, crlf]) {
        const expected = isNumberedListing(text.split('\n', 400));
        expect(isNumberedText(text)).toBe(expected);
        detectContentType(text);
        expect(isNumberedText(text)).toBe(expected);
      }
      detectContentType(listing);
      expect(isNumberedText(plain)).toBe(false);
    } finally {
      endCall();
    }
    expect(isNumberedText(listing)).toBe(true);
  });

  it('lineKey drops a listing number and what trim drops, and the scan of earlier lines keys them alike', () => {
    const rand = rng(11);
    const alphabet = [
      '1',
      '2',
      ' ',
      '\t',
      '→',
      'x',
      'y',
      '-',
      '\u00a0',
      '\u3000',
      '\ufeff',
      '\u2028',
      '\r',
      'é',
    ];
    const lines = Array.from({ length: 3000 }, () =>
      randomString(rand, alphabet, 1 + Math.floor(rand() * 16)),
    );
    for (const line of lines) expect(lineKey(line)).toBe(line.replace(/^ *\d+(?:→|\t)/, '').trim());
    // the history finds each key in place in the message's text; it must be the key a lookup makes
    const history = new History([{ role: 'tool', tool_call_id: 'c1', content: lines.join('\n') }]);
    const expected = new Set(lines.map(lineKey).filter((key) => key.length >= 8));
    expect(expected.size).toBeGreaterThan(500);
    const found = history.linesBefore(1);
    expect(found.size).toBe(expected.size);
    for (const key of expected) expect(found.has(key)).toBe(true);
  });

  it("numberedMatches judges a listing as numberedNonBlank does, with each line's match", () => {
    const rand = rng(5);
    const kinds = ['     12→code', '7\tx', '', '   ', 'note', '  3→', 'x 1→'];
    for (let k = 0; k < 2000; k++) {
      const lines = Array.from(
        { length: 1 + Math.floor(rand() * 12) },
        () => kinds[Math.floor(rand() * kinds.length)]!,
      );
      const matches = numberedMatches(lines);
      expect(matches !== null).toBe(numberedNonBlank(lines) > 0);
      if (matches)
        expect(matches.map((m) => m?.[0] ?? null)).toEqual(
          lines.map((l) => NUMBERED_RE.exec(l)?.[0] ?? null),
        );
    }
  });
});
