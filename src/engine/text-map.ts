import { LRUCache } from 'lru-cache';

/**
 * A map keyed by texts that never has V8 hash a text. A `Map` keyed by a
 * string hashes it when it is first looked up, ~1.2 ns a character for
 * strings under 16 Ki characters (longer ones V8 hashes by length alone),
 * twice what SHA-256 costs, and every tool output of a new conversation is a
 * fresh string (measured on ~8 KB texts: 0.40 ms for 320 K characters,
 * against 0.21 ms of SHA-256). Keyed by length instead, a lookup compares the
 * few texts of that length: the same string object at once, an equal copy
 * as fast as memory is read, a different text at its first differing
 * character. Exact, like a `Map`.
 */
export class TextMap<V> {
  private readonly byLength = new Map<number, Array<[string, V]>>();
  private count = 0;

  /** Texts held. */
  get size(): number {
    return this.count;
  }

  get(text: string): V | undefined {
    const bucket = this.byLength.get(text.length);
    if (bucket === undefined) return undefined;
    for (let k = 0; k < bucket.length; k++) if (bucket[k]![0] === text) return bucket[k]![1];
    return undefined;
  }

  set(text: string, value: V): void {
    const bucket = this.byLength.get(text.length);
    if (bucket === undefined) {
      this.byLength.set(text.length, [[text, value]]);
      this.count += 1;
      return;
    }
    for (let k = 0; k < bucket.length; k++)
      if (bucket[k]![0] === text) {
        bucket[k]![1] = value;
        return;
      }
    bucket.push([text, value]);
    this.count += 1;
  }

  clear(): void {
    this.byLength.clear();
    this.count = 0;
  }
}

/** One text's entry in a `TextLru` bucket: the text, its value, and its size. */
type Kept<V> = [text: string, value: V, size: number];

/** Texts a `TextLru` keeps of one length; an older one of that length leaves for a new one past this. */
const BUCKET_MAX = 4;

/**
 * An LRU of values by text, keyed by length like `TextMap` (a lookup never
 * has V8 hash the text), bounded by the sizes given with each entry. Up to
 * `BUCKET_MAX` texts of a length are kept together, as one entry of the LRU.
 */
export class TextLru<V> {
  private readonly lru: LRUCache<number, Array<Kept<V>>>;

  constructor(maxSize: number) {
    this.lru = new LRUCache<number, Array<Kept<V>>>({ maxSize, sizeCalculation: bucketSize });
  }

  get maxSize(): number {
    return this.lru.maxSize;
  }

  /** Sum of the sizes of the texts held. */
  get calculatedSize(): number {
    return this.lru.calculatedSize;
  }

  get(text: string): V | undefined {
    const bucket = this.lru.get(text.length);
    if (bucket === undefined) return undefined;
    for (let k = 0; k < bucket.length; k++) if (bucket[k]![0] === text) return bucket[k]![1];
    return undefined;
  }

  has(text: string): boolean {
    const bucket = this.lru.peek(text.length);
    if (bucket === undefined) return false;
    for (let k = 0; k < bucket.length; k++) if (bucket[k]![0] === text) return true;
    return false;
  }

  /** Keeps `value` for `text`, counted as `size` against the bound. */
  set(text: string, value: V, size: number): void {
    const old = this.lru.peek(text.length);
    const bucket: Array<Kept<V>> = [[text, value, size]];
    if (old !== undefined)
      for (let k = 0; k < old.length && bucket.length < BUCKET_MAX; k++)
        if (old[k]![0] !== text) bucket.push(old[k]!);
    // a new array: the LRU measures an entry when it is set
    this.lru.set(text.length, bucket);
  }
}

function bucketSize<V>(bucket: Array<Kept<V>>): number {
  let n = 0;
  for (const [, , size] of bucket) n += size;
  return Math.max(1, n);
}
