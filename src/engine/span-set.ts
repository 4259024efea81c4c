/**
 * A set of strings given as spans of longer texts, for the history's scans
 * (history.ts): the identifiers and line keys of every earlier message. A
 * `Set<string>` of slices made a string per span and hashed it, and first
 * sight of a long conversation added hundreds of thousands of them, mostly
 * repeats (issue 19). Here a span is hashed in place and stored as its
 * text, start and length: a repeat allocates nothing. Exact: a lookup
 * compares characters, never hashes alone.
 */

/** The questions the compressors ask of a scan (a `ReadonlySet<string>` answers them too). */
export interface StringLookup {
  has(value: string): boolean;
  readonly size: number;
}

const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;

/** FNV-1a of the UTF-16 code units of `text[start, end)`. */
function hashSpan(text: string, start: number, end: number): number {
  let h = FNV_OFFSET;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h;
}

/** Exact set of spans of texts, hashed in place (see the file's comment). */
export class SpanSet implements StringLookup {
  private readonly texts: string[] = [];
  private textOf = new Int32Array(64);
  private startOf = new Int32Array(64);
  private lengthOf = new Int32Array(64);
  private hashOf = new Int32Array(64);
  /** Open addressing: entry index + 1 per slot, 0 when free; at most half full. */
  private slots = new Int32Array(128);
  size = 0;

  /** Registers `text` for the spans added next; returns its id for `addSpan`. */
  addText(text: string): number {
    this.texts.push(text);
    return this.texts.length - 1;
  }

  /** Adds `texts[id][start, end)`. */
  addSpan(id: number, start: number, end: number): void {
    const text = this.texts[id]!;
    const h = hashSpan(text, start, end);
    const mask = this.slots.length - 1;
    const length = end - start;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]! - 1;
      if (entry < 0) {
        this.insert(slot, id, start, length, h);
        return;
      }
      if (this.hashOf[entry] === h && this.lengthOf[entry] === length && this.sameAs(entry, text, start))
        return;
    }
  }

  has(value: string): boolean {
    const h = hashSpan(value, 0, value.length);
    const mask = this.slots.length - 1;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]! - 1;
      if (entry < 0) return false;
      if (this.hashOf[entry] === h && this.lengthOf[entry] === value.length && this.sameAs(entry, value, 0))
        return true;
    }
  }

  /** Whether entry `entry` spells `text[start, start + its length)`. */
  private sameAs(entry: number, text: string, start: number): boolean {
    const own = this.texts[this.textOf[entry]!]!;
    const from = this.startOf[entry]!;
    const length = this.lengthOf[entry]!;
    for (let k = 0; k < length; k++)
      if (own.charCodeAt(from + k) !== text.charCodeAt(start + k)) return false;
    return true;
  }

  private insert(slot: number, id: number, start: number, length: number, h: number): void {
    const entry = this.size;
    if (entry === this.textOf.length) {
      this.textOf = grown(this.textOf);
      this.startOf = grown(this.startOf);
      this.lengthOf = grown(this.lengthOf);
      this.hashOf = grown(this.hashOf);
    }
    this.textOf[entry] = id;
    this.startOf[entry] = start;
    this.lengthOf[entry] = length;
    this.hashOf[entry] = h;
    this.size = entry + 1;
    this.slots[slot] = entry + 1;
    if (2 * this.size > this.slots.length) this.rehash();
  }

  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let entry = 0; entry < this.size; entry++) {
      let slot = this.hashOf[entry]! & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = entry + 1;
    }
    this.slots = slots;
  }

  /** Bytes of the set's own arrays (the texts are counted by whoever holds them). */
  get bytes(): number {
    return 16 * this.textOf.length + 4 * this.slots.length + 8 * this.texts.length;
  }
}

function grown(a: Int32Array): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}
