// Copied into dist/vendor by scripts/bundle-vendor.js; imported by the o200k_base bundle.
//
// o200k_base's pre-tokenizer (gpt-tokenizer's split regex, with Unicode property classes) costs
// most of a token count: the regex engine tries its seven alternatives at every chunk. For ASCII
// text the classes are a few ranges, and the first alternative that matches can be decided by
// looking at the next characters, so `nextChunkEnd` finds the same chunk in one pass:
//
//   1. [^\r\n\p{L}\p{N}]?[\p{Lu}...]*[\p{Ll}...]+(contraction)?   " Word", "(word", "HTTPServer"
//   2. [^\r\n\p{L}\p{N}]?[\p{Lu}...]+[\p{Ll}...]*(contraction)?   " HTTP", "ABC"
//   3. \p{N}{1,3}
//   4.  ?[^\s\p{L}\p{N}]+[\r\n/]*                                  " ->", "});\n"
//   5. \s*[\r\n]+          (whitespace up to its last line break)
//   6. \s+(?!\S)           (whitespace but its last character, or all of it at the end)
//   7. \s+
//
// The regex decides a chunk from the text at and after its start only, so the chunks can be found
// one after another either way: where a character that decides the chunk is not ASCII and not of
// one class alone (see `wideClass`), `nextChunkEnd` returns -1 and the regex finds that one chunk.
// test/packaging/vendor-tokenizer.test.ts compares both splits.
//
// `chunkCountFrom` (pre-tokens only, no chunk cut out) runs `nextChunkEnd` compiled
// (o200k-chunks.wat, as o200k-chunks-wasm.js) over a copy of the text, a window at a time, and
// finds here the chunks it leaves: those for the regex, those with a character beyond ASCII not
// classified yet, and those that need a character past the window. Both read the same tables.
// Where Node runs without WebAssembly (`--jitless`), the count runs here, chunk by chunk.
//
// `sumChunkCounts` (the token count) runs the same compiled pass once `placeRanks` has put the
// rank index and the token text in its memory: each chunk it finds is looked up there, and only
// the chunks of several tokens come back here, for BPE.

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { O200K_CHUNKS_WASM } from './o200k-chunks-wasm.js';

const compiled = instantiate();

function instantiate() {
  if (typeof WebAssembly !== 'object') return undefined;
  try {
    return new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(O200K_CHUNKS_WASM, 'base64'))).exports;
  } catch {
    return undefined;
  }
}

/** The compiled count's memory: the tables, the window, the chunks it lists (see o200k-chunks.wat). */
let memory = compiled && Buffer.from(compiled.memory.buffer);
const WINDOW_AT = 131072;
/** Characters of a window (64 KiB, UTF-16). */
const WINDOW = 32768;
/** The chunks of several tokens a count lists: start and end in the window, one pair each. */
const OTHERS_AT = 196608;
let others = compiled && new Int32Array(compiled.memory.buffer, OTHERS_AT, 2 * WINDOW);
/** Where `placeRanks` puts the rank index, then the token text (after the recent tokens' slots). */
const RANKS_AT = 720896;
/** Whether the compiled count can look tokens up (`placeRanks`). */
let ranked = false;

const LOWER = 1;
const UPPER = 2;
const DIGIT = 4;
const SPACE = 8; // \s
const BREAK = 16; // \r \n
const SYMBOL = 32; // not \s, \p{L}, \p{N}
const LETTER = LOWER | UPPER;

let CLASS = compiled ? new Uint8Array(compiled.memory.buffer, 0, 128) : new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  if (c >= 97 && c <= 122) CLASS[c] = LOWER;
  else if (c >= 65 && c <= 90) CLASS[c] = UPPER;
  else if (c >= 48 && c <= 57) CLASS[c] = DIGIT;
  else if (c === 10 || c === 13) CLASS[c] = SPACE | BREAK;
  else if (c === 32 || (c >= 9 && c <= 13)) CLASS[c] = SPACE;
  else CLASS[c] = SYMBOL;
}

const APOSTROPHE = 39;
const SLASH = 47;

/** End of the optional contraction ('s 'd 'm 't 'll 've 're, any case) at `i`. */
function contraction(text, i) {
  if (text.charCodeAt(i) !== APOSTROPHE) return i;
  const a = text.charCodeAt(i + 1) | 32;
  if (a === 115 || a === 100 || a === 109 || a === 116) return i + 2; // s d m t
  const b = text.charCodeAt(i + 2) | 32;
  if ((a === 108 && b === 108) || (a === 118 && b === 101) || (a === 114 && b === 101)) return i + 3; // ll ve re
  return i;
}

/**
 * Classes of characters beyond ASCII, found on first sight by the regex's own property classes and
 * kept (one byte per UTF-16 code unit): many texts repeat a few such characters on every line
 * (`→` in file listings, box drawing, `·`, `—`, `✓`), and each sent a chunk to the regex engine.
 * A character of one class alone gets its bits as an ASCII one does: a letter that is only upper
 * (Lu, Lt) or only lower (Ll) case, a digit (N), a space (\s; the only line breaks, \r and \n, are
 * ASCII) or a symbol (none of these). Marks and the other letters (Lm, Lo) are in both letter
 * classes of the regex, which it tells apart by backtracking, and surrogates are halves of a
 * character: those stay -1, for the regex.
 */
const UNKNOWN = 127;
let WIDE = (compiled ? new Int8Array(compiled.memory.buffer, 65536, 0x10000) : new Int8Array(0x10000)).fill(
  UNKNOWN,
);

/**
 * Puts a rank index and its token text (the files of o200k_base.js, see scripts/bundle-vendor.js)
 * in the compiled count's memory, grown for them once, so that `sumChunkCounts` looks tokens up
 * there. Returns the index (32-bit integers) and the text (UTF-16 code units) as views of that
 * memory, for the JavaScript's own lookups; undefined without WebAssembly.
 */
export function placeRanks(indexPath, tokensPath) {
  if (!compiled || ranked) return undefined;
  const index = openSync(indexPath, 'r');
  const tokens = openSync(tokensPath, 'r');
  try {
    const indexBytes = fstatSync(index).size;
    const tokensAt = RANKS_AT + indexBytes + 7 - ((indexBytes + 7) % 8);
    const tokensBytes = fstatSync(tokens).size;
    const pages = Math.ceil((tokensAt + tokensBytes) / 65536) - compiled.memory.buffer.byteLength / 65536;
    if (pages > 0) compiled.memory.grow(pages);
    // growing detaches the views of the memory
    const buffer = compiled.memory.buffer;
    memory = Buffer.from(buffer);
    others = new Int32Array(buffer, OTHERS_AT, 2 * WINDOW);
    CLASS = new Uint8Array(buffer, 0, 128);
    WIDE = new Int8Array(buffer, 65536, 0x10000);
    readAll(index, memory, RANKS_AT, indexBytes);
    readAll(tokens, memory, tokensAt, tokensBytes);
    const ints = new Int32Array(buffer, RANKS_AT, indexBytes >> 2);
    const n = ints[0];
    compiled.ranks(RANKS_AT + 12, RANKS_AT + 4 * (4 + n), ints[2] - 1, tokensAt);
    ranked = true;
    return { ints, units: new Uint16Array(buffer, tokensAt, tokensBytes >> 1) };
  } finally {
    closeSync(index);
    closeSync(tokens);
  }
}

/** Whether `sumChunkCounts` looks tokens up in the compiled pass (after `placeRanks`). */
export function countsCompiled() {
  return ranked;
}

function readAll(fd, into, at, bytes) {
  for (let done = 0; done < bytes; ) {
    const n = readSync(fd, into, at + done, bytes - done, done);
    if (n === 0) throw new Error('o200k_base: a rank file ended early');
    done += n;
  }
}

function wideClass(c) {
  let k = WIDE[c];
  if (k === UNKNOWN) {
    k = classify(c);
    WIDE[c] = k;
  }
  return k;
}

function classify(c) {
  if (c >= 0xd800 && c <= 0xdfff) return -1;
  const ch = String.fromCharCode(c);
  if (/\p{M}/u.test(ch)) return -1;
  if (/[\p{Lu}\p{Lt}]/u.test(ch)) return UPPER;
  if (/\p{Ll}/u.test(ch)) return LOWER;
  if (/\p{L}/u.test(ch)) return -1;
  if (/\p{N}/u.test(ch)) return DIGIT;
  if (/\s/u.test(ch)) return SPACE;
  return SYMBOL;
}

/** The class bits of the character at `i`: 0 past the end, -1 when the regex must decide. */
function classAt(text, i) {
  if (i >= text.length) return 0;
  const c = text.charCodeAt(i);
  return c < 128 ? CLASS[c] : wideClass(c);
}

/** End of the run of characters in `bits` from `i`, or -1 when it stops at one the regex must decide. */
function runEnd(text, i, bits) {
  // classAt written out: the runs are most of the text, and this loop its hottest (~6 % faster)
  const n = text.length;
  for (; i < n; i++) {
    const c = text.charCodeAt(i);
    const k = c < 128 ? CLASS[c] : wideClass(c);
    if (k < 0) return -1;
    if (!(k & bits)) return i;
  }
  return n;
}

/** Where the chunk starting at `p` ends, or -1 when a character that decides it is left to the regex. */
export function nextChunkEnd(text, p) {
  const n = text.length;
  const c = classAt(text, p);
  if (c < 0) return -1;
  // 1 and 2: a letter run, after at most one character that is not a line break, letter or digit
  let q = -1;
  if (c & LETTER) q = p;
  else if (!(c & (BREAK | DIGIT))) {
    const next = classAt(text, p + 1);
    if (next < 0) return -1;
    if (next & LETTER) q = p + 1;
  }
  if (q >= 0) {
    const upper = runEnd(text, q, UPPER);
    const lower = upper < 0 ? -1 : runEnd(text, upper, LOWER);
    return lower < 0 ? -1 : contraction(text, lower);
  }
  // 3: up to three digits
  if (c & DIGIT) {
    let i = p + 1;
    while (i < p + 3) {
      const k = classAt(text, i);
      if (k < 0) return -1;
      if (!(k & DIGIT)) break;
      i++;
    }
    return i;
  }
  // 4: symbols, after at most one space, then line breaks and slashes
  let s = -1;
  if (c & SYMBOL) s = p;
  else if (text.charCodeAt(p) === 32) {
    const next = classAt(text, p + 1);
    if (next < 0) return -1;
    if (next & SYMBOL) s = p + 1;
  }
  if (s >= 0) {
    let i = runEnd(text, s + 1, SYMBOL);
    if (i < 0) return -1;
    for (;;) {
      const x = text.charCodeAt(i);
      if (x === 10 || x === 13 || x === SLASH) i++;
      else return i;
    }
  }
  // 5 to 7: whitespace
  let w = p;
  let lastBreak = -1;
  for (;;) {
    const k = classAt(text, w);
    if (k < 0) return -1;
    if (!(k & SPACE)) break;
    if (k & BREAK) lastBreak = w;
    w++;
  }
  if (lastBreak >= 0) return lastBreak + 1;
  if (w === n) return w;
  return w - p >= 2 ? w - 1 : w;
}

/**
 * Calls `each(chunk)` for every chunk of `text` as `regex` (o200k_base's split regex, global)
 * would match them, and returns the sum of what it returns; stops early once the sum reaches
 * `enough`.
 */
export function sumChunks(text, regex, each, enough = Number.POSITIVE_INFINITY) {
  let total = 0;
  let p = 0;
  const n = text.length;
  while (p < n && total < enough) {
    const end = chunkEnd(text, p, regex);
    total += each(text.slice(p, end));
    p = end;
  }
  return total;
}

/**
 * The token count of `text` as BPE per chunk gives it: a chunk that is a token of its own counts
 * 1, found by `isToken(text, start, end)` without cutting it out of the text (most chunks are
 * words, numbers and punctuation of one token); any other chunk counts `other(chunk)`.
 */
export function sumChunkCounts(text, regex, isToken, other) {
  if (ranked) return countCompiled(text, regex, 0, Number.POSITIVE_INFINITY, isToken, other)[0];
  let total = 0;
  for (let p = 0; p < text.length; ) {
    const end = chunkEnd(text, p, regex);
    total += isToken(text, p, end) ? 1 : other(text.slice(p, end));
    p = end;
  }
  return total;
}

/**
 * How many chunks `text` has from `from` (a chunk boundary: 0, or where an earlier count stopped;
 * `sumChunks` with every chunk counting 1, no chunk cut out), stopping at `enough`. Returns the
 * count and where it stopped (`text.length` when it reached the end), so a count stopped early can
 * go on from there and find the same chunks as one count from the start.
 */
export function chunkCountFrom(text, regex, from, enough) {
  if (compiled) return countCompiled(text, regex, from, enough);
  let total = 0;
  let p = from;
  for (; p < text.length && total < enough; total++) p = chunkEnd(text, p, regex);
  return [total, p];
}

/**
 * The compiled pass over `text` from `from`, a window at a time, stopping at `enough`: every chunk
 * counts 1, or, given `isToken` and `other` (`sumChunkCounts`), its tokens: the pass looks each
 * chunk up in the rank index (`placeRanks`) and lists those of several tokens, which `other`
 * counts. The chunks the pass leaves are found here. Returns the count and where it stopped.
 */
function countCompiled(text, regex, from, enough, isToken, other) {
  const lookup = isToken === undefined ? 0 : 1;
  let total = 0;
  let p = from;
  const n = text.length;
  while (p < n && total < enough) {
    const len = Math.min(WINDOW, n - p);
    memory.write(p === 0 && len === n ? text : text.slice(p, p + len), WINDOW_AT, 'utf16le');
    const atEnd = p + len === n ? 1 : 0;
    let q = 0;
    for (;;) {
      total += compiled.count(q, len, atEnd, Math.min(enough - total, 0x7fffffff), lookup);
      if (lookup) {
        const listed = compiled.others();
        for (let k = 0; k < 2 * listed; k += 2) total += other(text.slice(p + others[k], p + others[k + 1]));
      }
      q = compiled.stop();
      if (q >= len || total >= enough) break;
      // a chunk the compiled pass leaves here
      const end = chunkEnd(text, p + q, regex);
      total += !lookup || isToken(text, p + q, end) ? 1 : other(text.slice(p + q, end));
      q = end - p;
      if (q >= len || total >= enough) break;
    }
    p += q;
  }
  return [total, p];
}

/** Where the chunk at `p` ends, by `nextChunkEnd` or else the regex. */
function chunkEnd(text, p, regex) {
  const end = nextChunkEnd(text, p);
  if (end >= 0) return end;
  regex.lastIndex = p;
  const m = regex.exec(text);
  // every character starts a match; guard anyway against a regex that skips
  if (m === null || m.index !== p) throw new Error(`o200k split: no chunk at ${p}`);
  return p + m[0].length;
}

/** How many chunks `text` has (`chunkCountFrom` from its start); stops at `enough`. */
export function chunkCount(text, regex, enough = Number.POSITIVE_INFINITY) {
  return chunkCountFrom(text, regex, 0, enough)[0];
}
