/**
 * Bytes of the process-wide memos, estimated the way V8 stores them, and the
 * bounds of the engine's own memos (content hashes, history scans), which the
 * server sets from `--memo-max-bytes` before the engine is loaded (issue 19).
 * Small and free of imports: the server reads and sets these without loading
 * the engine.
 */

/** V8's header of a string (map, hash, length), rounded up. */
const STRING_HEADER = 16;

/**
 * Bookkeeping of one memo entry besides its key and value: lru-cache's slots
 * (key, value, size, links) and its Map entry.
 */
export const ENTRY_OVERHEAD = 64;

/** Any character above Latin-1: V8 then keeps the whole string two bytes a character. */
const WIDE = /[\u0100-\uffff]/;

/**
 * Bytes V8 takes for `text`: one a character when all of them are Latin-1,
 * two otherwise (a text with one `→` or emoji takes twice its length).
 */
export function stringBytes(text: string): number {
  return STRING_HEADER + (WIDE.test(text) ? 2 * text.length : text.length);
}

/** A memo of the engine bounded by estimated bytes: what it holds, and how to bound it. */
export interface BoundedMemo {
  /** Estimated bytes held now. */
  bytes(): number;
  /** Sets the bound (bytes); entries past it leave, least recently used first. */
  limit(maxBytes: number): void;
}

/**
 * The memos bounded here: `content_hashes` (hash.ts), `history_scans`
 * (history.ts), and the splicer's `spelled_lengths` (json/spans.ts).
 */
export type EngineMemoName = 'content_hashes' | 'history_scans' | 'spelled_lengths';

/** Bounds for `svc compress` (one short run): the sizes the memos had before they were configurable. */
const limits: Record<EngineMemoName, number> = {
  content_hashes: 16 * 1024 * 1024,
  history_scans: 16 * 1024 * 1024,
  spelled_lengths: 16 * 1024 * 1024,
};
const memos = new Map<EngineMemoName, BoundedMemo>();

/** Bounds an engine memo, now if it is loaded, else when it is. */
export function setEngineMemoLimit(name: EngineMemoName, maxBytes: number): void {
  limits[name] = Math.max(1024, Math.floor(maxBytes));
  memos.get(name)?.limit(limits[name]);
}

/** The bound of an engine memo (read by the memo when its module loads). */
export function engineMemoLimit(name: EngineMemoName): number {
  return limits[name];
}

/** Called by a memo's module when it loads. */
export function registerEngineMemo(name: EngineMemoName, memo: BoundedMemo): void {
  memos.set(name, memo);
}

/** Estimated bytes of each engine memo (0 for one not loaded yet), for `/metrics`. */
export function engineMemoBytes(): Record<EngineMemoName, number> {
  return {
    content_hashes: memos.get('content_hashes')?.bytes() ?? 0,
    history_scans: memos.get('history_scans')?.bytes() ?? 0,
    spelled_lengths: memos.get('spelled_lengths')?.bytes() ?? 0,
  };
}

/** How `--memo-max-bytes` is shared by the memos of a process (or of the large-body worker). */
export interface MemoShares {
  /** Per-content engine results (`createEngineMemo`): 2/16. */
  engineResults: number;
  /** Reused body parses (`PrefixParser`): 7/16. */
  bodyParses: number;
  /** Characters of the token-count memo (tokens.ts counts characters; at most two bytes each): 1/16 in bytes. */
  tokenCountChars: number;
  /** Content hashes (hash.ts): 1/16. */
  contentHashes: number;
  /** History scans (history.ts): 4/16. */
  historyScans: number;
  /** JSON spelled lengths of long strings (json/spans.ts): 1/16. */
  spelledLengths: number;
}

/**
 * The shares, from what a conversation of ~91k tokens takes (Claude Code
 * shaped, `bench/memory.js`): its body parse ~1.3 MB, its history scans
 * ~0.6 MB, its engine results and hashes far less (they are per content, and
 * content repeats across conversations: 10 such conversations held
 * about 1 MB of results). 16 MiB keeps the parses and scans of about six
 * such conversations; a server with more long conversations going at once
 * needs more (each request of a conversation that fell out re-parses and
 * re-scans its history: 10 concurrent ~91k conversations ran at 0.4 times
 * the requests/s with 16 MiB as with 64 MiB, `bench/memory.js --mode session`).
 */
export function memoShares(maxBytes: number): MemoShares {
  const part = maxBytes / 16;
  return {
    engineResults: 2 * part,
    bodyParses: 7 * part,
    tokenCountChars: part / 2,
    contentHashes: part,
    historyScans: 4 * part,
    spelledLengths: part,
  };
}

/** Bounds the memos registered here to their shares. */
export function limitEngineMemos(shares: MemoShares): void {
  setEngineMemoLimit('content_hashes', shares.contentHashes);
  setEngineMemoLimit('history_scans', shares.historyScans);
  setEngineMemoLimit('spelled_lengths', shares.spelledLengths);
}
