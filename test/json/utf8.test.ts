import { describe, expect, it } from 'vitest';
import { decodeUtf8 } from '../../src/json/utf8.js';

/** Characters of each UTF-8 length (1 to 4 bytes). */
const WIDE = ['é', '→', '😀'];

describe('decodeUtf8', () => {
  it('decodes a long ASCII body, and short bodies, as toString does', () => {
    for (const text of ['', 'short é →', 'x'.repeat(40_000), `${'{"a":1}'.repeat(9_000)}`]) {
      const raw = Buffer.from(text);
      expect(decodeUtf8(raw)).toBe(raw.toString('utf8'));
    }
  });

  it('gives the text back when cuts fall inside multi-byte characters', () => {
    // pieces are cut every 2,048 bytes; at every eighth cut a character starts 1 to (its length - 1)
    // bytes before it, so the cut splits it, and most pieces stay ASCII (the body is decoded in runs)
    for (const char of WIDE) {
      const width = Buffer.byteLength(char);
      let text = '';
      let bytes = 0;
      for (let cut = 2048, k = 0; cut < 200_000; cut += 8 * 2048, k++) {
        const pad = cut - (1 + (k % (width - 1))) - bytes;
        text += 'x'.repeat(pad) + char;
        bytes += pad + width;
      }
      text += 'y'.repeat(4096);
      expect(decodeUtf8(Buffer.from(text))).toBe(text);
    }
  });

  it('gives the text back for a body mostly in non-ASCII pieces (decoded whole)', () => {
    const text = Array.from({ length: 4000 }, (_, i) => `${String(i).padStart(6)}→const x${i} = 1;`).join(
      '\n',
    );
    expect(decodeUtf8(Buffer.from(text))).toBe(text);
  });

  it('gives the text back for a mostly ASCII body with scattered wide characters', () => {
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    const parts: string[] = [];
    while (parts.join('').length < 200_000) {
      parts.push('x'.repeat(next() % 9000));
      parts.push(WIDE[next() % 3]!.repeat(1 + (next() % 40)));
    }
    const text = `\uFEFF${parts.join('')}`;
    expect(decodeUtf8(Buffer.from(text))).toBe(text);
  });

  it('decodes invalid UTF-8 whole, with the replacement characters toString gives', () => {
    const ascii = Buffer.from('y'.repeat(50_000));
    const cases = [
      // a lone continuation byte at a cut, a truncated sequence at the end, an overlong form
      Buffer.concat([ascii.subarray(0, 2048), Buffer.from([0x80, 0x80]), ascii]),
      Buffer.concat([ascii, Buffer.from([0xe2, 0x86])]),
      Buffer.concat([ascii, Buffer.from([0xc0, 0xaf]), ascii]),
    ];
    for (const raw of cases) {
      expect(decodeUtf8(raw)).toBe(raw.toString('utf8'));
      expect(decodeUtf8(raw)).toContain('\uFFFD');
    }
  });
});
