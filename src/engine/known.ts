/**
 * What earlier messages held, as the history keeps it for the compressors:
 * the identifiers (`NameSet`) and the line keys (`LineSet`) of messages
 * 0..i-1. The compressors only ask "was this in an earlier message?", so
 * each set keeps a 64-bit hash per element instead of a string: the scans
 * run in compiled code (`wasm/known.wat`) over a copy of each text and make
 * no slice, no V8 string hash and no `Set` entry per element, and a set
 * holds nothing of the texts it scanned. Lookups hash the asked string the
 * same way in JavaScript.
 *
 * Two different strings share a hash with odds of about n²/2^65 for n
 * elements (under 10^-9 for a hundred thousand): each lane collides as a
 * random 32-bit hash would (a million generated lines, identifiers, numbers
 * and strings differing only at odd places: 97-128 collisions a lane, ~116
 * expected), and 3 million of each gave no 64-bit collision. The answer is
 * then "seen": a compressor keeps one line less or names one identifier
 * less in an index (the text stays in the CCR store), and it is the same on
 * every turn (principle 2).
 */
import { ID_CHAR, ID_CLASS, IDENTIFIER_SPAN, nextIdentifier } from './identifiers.js';
import { KNOWN_WASM } from './wasm/known-wasm.js';

/** Identifiers a compressor may ask about: a `Set`, or the history's `NameSet`. */
export interface KnownNames {
  has(id: string): boolean;
}

/** Line keys (`lineKey`) a compressor may ask about: a `Set`, or the history's `LineSet`. */
export interface KnownLines {
  readonly size: number;
  has(key: string): boolean;
}

/** Lines shorter than this (trimmed) are too common to identify repeated content. */
export const MIN_LINE_CHARS = 8;

/** Normal form of a line for repeat detection: line number of a listing and outer whitespace removed. */
export function lineKey(line: string): string {
  const [start, end] = keyBounds(line, 0, line.length);
  return line.slice(start, end);
}

/**
 * Where the `lineKey` of the line `text[from, end)` starts and ends in
 * `text`: after its listing number, without what `trim` removes. The
 * compiled scan of earlier lines finds the same bounds.
 */
function keyBounds(text: string, from: number, end: number): [number, number] {
  let start = listingPrefixEnd(text, from);
  while (start < end && isTrimmed(text.charCodeAt(start))) start++;
  while (end > start && isTrimmed(text.charCodeAt(end - 1))) end--;
  return [start, end];
}

/**
 * End of a listing's line number (`/^ *\d+(?:→|\t)/`) in the line starting at
 * `from` of `text`, or `from`. Never reads past the line: its end (`\n`, or
 * the end of the text) stops every step.
 */
function listingPrefixEnd(text: string, from: number): number {
  let i = from;
  while (text.charCodeAt(i) === 32) i++;
  const digits = i;
  for (let c = text.charCodeAt(i); c >= 48 && c <= 57; c = text.charCodeAt(i)) i++;
  if (i === digits) return from;
  const c = text.charCodeAt(i);
  return c === 0x2192 || c === 9 ? i + 1 : from;
}

/** What `trim` removes (`\s`: white space and line terminators), by character code. */
function isTrimmed(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || (c >= 128 && SPACE_RE.test(String.fromCharCode(c)));
}

const SPACE_RE = /\s/;

/** The compiled scans (see `wasm/known.wat`). */
interface Scans {
  memory: WebAssembly.Memory;
  ids(n: number): number;
  lines(n: number, min: number): number;
}

/** Where the compiled scans read a chunk and write their hashes. */
const TEXT_AT = 32_768;
const HASHES_AT = 128;
/** Characters per chunk: the chunk area's 32 KiB, UTF-16. */
const CHUNK = 16_384;

/** The class bit of the compiled scans' table besides `ID_CLASS`'s (`ID_CHAR` 1, `ID_MARK` 2, `ID_TRAILING` 4). */
const SPACE = 8;

let compiled: { scans: Scans; bytes: Buffer; hashes: Int32Array } | null | undefined;

/**
 * The compiled scans, instantiated on first use (a module of under a
 * kilobyte); null where Node runs without WebAssembly (`--jitless`): the
 * sets then find the same strings in JavaScript.
 */
function scans(): typeof compiled {
  if (compiled !== undefined) return compiled;
  compiled = null;
  if (typeof WebAssembly !== 'object') return compiled;
  let instance: WebAssembly.Instance;
  try {
    instance = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(KNOWN_WASM, 'base64')));
  } catch {
    return compiled;
  }
  const exports = instance.exports as unknown as Scans;
  const bytes = Buffer.from(exports.memory.buffer);
  for (let c = 0; c < 128; c++) bytes[c] = ID_CLASS[c]! | (isTrimmed(c) ? SPACE : 0);
  compiled = { scans: exports, bytes, hashes: new Int32Array(exports.memory.buffer, HASHES_AT) };
  return compiled;
}

/** Writes `text[from, to)` where the compiled scans read it; returns its length. */
function load(bytes: Buffer, text: string, from: number, to: number): number {
  const part = from === 0 && to === text.length ? text : text.slice(from, to);
  bytes.write(part, TEXT_AT, 'utf16le');
  return part.length;
}

/**
 * The two lanes of the hash of `text[start, end)`, as the compiled scans
 * compute them: two characters a step (the first in the low half), the last
 * one alone when their number is odd, then their number.
 */
function hashOf(text: string, start: number, end: number): [number, number] {
  let h1 = 0x811c9dc5 | 0;
  let h2 = 0x2545f491;
  let i = start;
  for (; i + 1 < end; i += 2) {
    const w = text.charCodeAt(i) | (text.charCodeAt(i + 1) << 16);
    h1 = Math.imul(h1 ^ w, 0x01000193);
    h1 ^= h1 >>> 15;
    h2 = Math.imul(h2 ^ w, 0x5bd1e995);
    h2 ^= h2 >>> 13;
  }
  if (i < end) {
    const w = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ w, 0x01000193);
    h1 ^= h1 >>> 15;
    h2 = Math.imul(h2 ^ w, 0x5bd1e995);
    h2 ^= h2 >>> 13;
  }
  h1 = Math.imul(h1 ^ (end - start), 0x01000193);
  return [h1, h2];
}

/** Slots of a new set. */
const INITIAL_SLOTS = 1024;

/**
 * A set of 64-bit hashes: open addressing over an `Int32Array` of lane
 * pairs, at most half full. (0, 0) marks an empty slot, so a hash of
 * (0, 0) is kept as (0, 1).
 */
class HashSet {
  private slots = new Int32Array(2 * INITIAL_SLOTS);
  private count = 0;

  /** Distinct elements added. */
  get size(): number {
    return this.count;
  }

  /** Bytes the set holds. */
  get bytes(): number {
    return this.slots.byteLength;
  }

  /** True when the string `text[start, end)` was added. */
  protected hasSpan(text: string, start: number, end: number): boolean {
    const [h1, h2] = hashOf(text, start, end);
    return this.find(h1, h1 === 0 && h2 === 0 ? 1 : h2) >= 0;
  }

  protected addSpan(text: string, start: number, end: number): void {
    const [h1, h2] = hashOf(text, start, end);
    this.add(h1, h2);
  }

  /** Adds the `n` hashes the compiled scan just wrote in `hashes`. */
  protected addScanned(hashes: Int32Array, n: number): void {
    for (let k = 0; k < 2 * n; k += 2) this.add(hashes[k]!, hashes[k + 1]!);
  }

  /** Slot of the hash, or -1 - the empty slot where it would go. */
  private find(h1: number, h2: number): number {
    const { slots } = this;
    const mask = (slots.length >> 1) - 1;
    for (let i = h1 & mask; ; i = (i + 1) & mask) {
      const a = slots[2 * i]!;
      const b = slots[2 * i + 1]!;
      if (a === h1 && b === h2) return i;
      if (a === 0 && b === 0) return -1 - i;
    }
  }

  private add(h1: number, h2: number): void {
    if (h1 === 0 && h2 === 0) h2 = 1;
    const at = this.find(h1, h2);
    if (at >= 0) return;
    this.slots[-2 - 2 * at] = h1;
    this.slots[-1 - 2 * at] = h2;
    this.count += 1;
    if (4 * this.count >= this.slots.length) this.grow();
  }

  /** Twice the slots, the elements placed again (all distinct: no comparison). */
  private grow(): void {
    const old = this.slots;
    const slots = new Int32Array(2 * old.length);
    const mask = (slots.length >> 1) - 1;
    for (let k = 0; k < old.length; k += 2) {
      const a = old[k]!;
      const b = old[k + 1]!;
      if (a === 0 && b === 0) continue;
      let i = a & mask;
      while (slots[2 * i] !== 0 || slots[2 * i + 1] !== 0) i = (i + 1) & mask;
      slots[2 * i] = a;
      slots[2 * i + 1] = b;
    }
    this.slots = slots;
  }
}

function isIdChar(c: number): boolean {
  return c < 128 && (ID_CLASS[c]! & ID_CHAR) !== 0;
}

/**
 * A set of the strings a compiled scan finds in texts: `addText` cuts a text
 * into chunks no string goes on past, has each scanned, and adds a string
 * longer than a chunk in JavaScript (`addFrom`), as it adds all of them
 * where there is no WebAssembly.
 */
abstract class ScannedSet extends HashSet {
  /** True when an added text held `s` (as the scan finds it). */
  has(s: string): boolean {
    return this.hasSpan(s, 0, s.length);
  }

  /** Adds what the scan finds in `text`. */
  addText(text: string): void {
    const wasm = scans();
    let at = 0;
    while (at < text.length) {
      const cut = wasm ? this.chunkEnd(text, at) : at;
      if (wasm && cut > at) {
        this.addScanned(wasm.hashes, this.scan(wasm.scans, load(wasm.bytes, text, at, cut)));
        at = cut;
      } else at = this.addFrom(text, at);
    }
  }

  /** End of the chunk from `at` (at most `CHUNK` on): no string goes on past it; `at` or less when one does. */
  protected abstract chunkEnd(text: string, at: number): number;
  /** Scans the chunk just loaded (`n` characters); returns how many hashes it wrote. */
  protected abstract scan(compiledScans: Scans, n: number): number;
  /** Adds the first string at or after `at`, in JavaScript; returns where the next one may start. */
  protected abstract addFrom(text: string, at: number): number;
}

/** Identifiers of earlier messages (`extractIdentifiers`'s), by hash. */
export class NameSet extends ScannedSet implements KnownNames {
  protected chunkEnd(text: string, at: number): number {
    let cut = Math.min(text.length, at + CHUNK);
    // after a character no identifier holds (or with the text)
    if (cut < text.length) while (cut > at && isIdChar(text.charCodeAt(cut - 1))) cut--;
    return cut;
  }

  protected scan(compiledScans: Scans, n: number): number {
    return compiledScans.ids(n);
  }

  /** The next identifier at or after `at` (`nextIdentifier`, as `extractIdentifiers` takes them). */
  protected addFrom(text: string, at: number): number {
    const next = nextIdentifier(text, at);
    if (next < 0) return text.length;
    this.addSpan(text, IDENTIFIER_SPAN[0]!, IDENTIFIER_SPAN[1]!);
    return next;
  }
}

/** Line keys (`lineKey`, at least `MIN_LINE_CHARS`) of earlier messages, by hash. */
export class LineSet extends ScannedSet implements KnownLines {
  protected chunkEnd(text: string, at: number): number {
    // after a newline (or with the text)
    return text.length - at <= CHUNK ? text.length : text.lastIndexOf('\n', at + CHUNK - 1) + 1;
  }

  protected scan(compiledScans: Scans, n: number): number {
    return compiledScans.lines(n, MIN_LINE_CHARS);
  }

  /** The line at `start`. */
  protected addFrom(text: string, start: number): number {
    const nl = text.indexOf('\n', start);
    const lineEnd = nl === -1 ? text.length : nl;
    const [from, to] = keyBounds(text, start, lineEnd);
    if (to - from >= MIN_LINE_CHARS) this.addSpan(text, from, to);
    return nl === -1 ? text.length : nl + 1;
  }
}
