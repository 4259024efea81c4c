import { createRequire } from 'node:module';
import { LRUCache } from 'lru-cache';
import * as o200k from '#tokenizer/o200k';
import type { ChatMessage, Tokenizer } from './types.js';

/**
 * Token counting per model family, with gpt-tokenizer (bundled into
 * dist/vendor at build: `scripts/bundle-vendor.js`): `bench/tokenizers.js`
 * measures it against tiktoken (the design card's choice) on the same texts;
 * both give identical counts and gpt-tokenizer is several times faster once
 * warm, so it is the one behind this module.
 *
 * - o200k_base (exact): gpt-4o, gpt-4.1, gpt-5, o1/o3/o4 series, chatgpt-4o.
 * - cl100k_base (exact): gpt-4, gpt-4-turbo, gpt-3.5.
 * - estimate: Claude and unknown models. Anthropic publishes no tokenizer for
 *   current Claude models; we count with o200k_base and add 10%, which on our
 *   fixtures lands within a few percent of the usage Anthropic reports for
 *   English prose and code. Reported as `exact: false`.
 *
 * Message overhead follows OpenAI's accounting: 3 tokens per message, 1 more
 * for a name, 3 to prime the reply; each tool call adds its name, its
 * arguments and 3 tokens of framing.
 */
export type EncodingName = 'o200k_base' | 'cl100k_base';

/** Which encoding (or estimate) a model uses. */
export function encodingForModel(model: string): { encoding: EncodingName; exact: boolean } {
  const m = model.toLowerCase().replace(/^(openai|azure)\//, '');
  if (/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4|chatgpt-4o|gpt-oss|codex)/.test(m)) {
    return { encoding: 'o200k_base', exact: true };
  }
  if (/^(gpt-4|gpt-3\.5|text-embedding-3|text-embedding-ada)/.test(m)) {
    return { encoding: 'cl100k_base', exact: true };
  }
  return { encoding: 'o200k_base', exact: false };
}

/**
 * BPE cost grows with the square of a pre-token's length, so a run of 1024+
 * letters, whitespace or symbols (a base64 blob of one letter, a wall of
 * `=`) would stall the hot path. Such runs are counted in 256-character
 * slices: bounded time, off by at most a token per slice. Every other text is
 * counted exactly.
 */
const LONG_RUN = 1024;
const LONG_RUN_RE = /[\p{L}\p{M}]{1024,}|\s{1024,}|[^\s\p{L}\p{N}]{1024,}/gu;
const SLICE = 256;

const LETTERS = 1;
const SPACES = 2;
const SYMBOLS = 4;
const ANY = LETTERS | SPACES | SYMBOLS;

/** Which of `LONG_RUN_RE`'s classes the character at `i` may be in (a non-ASCII one: any). */
function runClass(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c >= 128) return ANY;
  if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90)) return LETTERS;
  if (c >= 48 && c <= 57) return 0;
  if (c === 32 || (c >= 9 && c <= 13)) return SPACES;
  return SYMBOLS;
}

/** Half of `LONG_RUN`: every run of `LONG_RUN` characters covers one whole step. */
const STEP = LONG_RUN / 2;

/**
 * False when `text` has no run `LONG_RUN_RE` could match, without reading
 * most of it (the regex tries every position and cost more than counting
 * most texts): a run of `LONG_RUN` characters of one class covers some whole
 * step `[k * STEP, (k + 1) * STEP]`, so only steps whose two ends may share a
 * class are read, backwards, until a character of another class (usually the
 * next space or letter). A true answer only means "look closer".
 */
export function mayHaveLongRun(text: string): boolean {
  for (let k = 0; k + STEP < text.length; k += STEP) {
    let bits = runClass(text, k) & runClass(text, k + STEP);
    for (let i = k + STEP - 1; bits !== 0 && i > k; i--) bits &= runClass(text, i);
    if (bits !== 0) return true;
  }
  return false;
}

function bounded(count: (text: string) => number): (text: string) => number {
  return (text) => {
    if (text.length < LONG_RUN || !mayHaveLongRun(text)) return count(text);
    LONG_RUN_RE.lastIndex = 0;
    let total = 0;
    let from = 0;
    for (let m = LONG_RUN_RE.exec(text); m !== null; m = LONG_RUN_RE.exec(text)) {
      if (m.index > from) total += count(text.slice(from, m.index));
      for (let k = 0; k < m[0].length; k += SLICE) total += count(m[0].slice(k, k + SLICE));
      from = m.index + m[0].length;
    }
    return from === 0 ? count(text) : total + (from < text.length ? count(text.slice(from)) : 0);
  };
}

type CountTokens = (text: string, options?: typeof PLAIN) => number;

let cl100k: CountTokens | undefined;

/**
 * cl100k_base, loaded on first use: its tables cost about 60 MB of memory and
 * only gpt-4 / gpt-3.5 models need them. Loaded synchronously (gpt-tokenizer's
 * CommonJS build) so counting stays synchronous.
 */
function countCl100k(text: string): number {
  if (!cl100k) {
    const require = createRequire(import.meta.url);
    const mod = require('#tokenizer/cl100k') as { countTokens: CountTokens };
    cl100k = mod.countTokens;
  }
  return cl100k(text, PLAIN);
}

/**
 * Special-token text (`<|endoftext|>` in a file an agent read) is plain text
 * to the provider, and counted as such; gpt-tokenizer's default throws on it.
 */
const PLAIN = { disallowedSpecial: new Set<string>() };

const countO200k = (text: string): number => o200k.countTokens(text, PLAIN);

type CountChunks = (text: string, enough?: number) => number;

/**
 * Pre-tokens of `text` from `from` (0, or where an earlier scan stopped: a
 * chunk boundary), stopping at `enough`: the count and where it stopped
 * (`text.length` at the end).
 */
type ScanChunks = (text: string, from: number, enough: number) => [count: number, end: number];

/**
 * Pre-tokens of a text (o200k_base's split): the bundled tokenizer's own
 * chunker (`dist/vendor`), or under gpt-tokenizer itself (which the tests
 * load) its split regex, which finds the same chunks
 * (test/packaging/vendor-tokenizer.test.ts). Every pre-token is at least one
 * token.
 */
const chunksO200k: ScanChunks =
  (o200k as { countChunksFrom?: ScanChunks }).countChunksFrom ??
  regexChunks(
    (o200k as unknown as { default: { bytePairEncodingCoreProcessor: { tokenSplitRegex: RegExp } } }).default
      .bytePairEncodingCoreProcessor.tokenSplitRegex,
  );

function regexChunks(split: RegExp): ScanChunks {
  const re = new RegExp(split.source, split.flags);
  return (text, from, enough) => {
    let n = 0;
    let end = from;
    re.lastIndex = from;
    while (n < enough && re.exec(text) !== null) {
      n++;
      end = re.lastIndex;
    }
    return [n, n < enough ? text.length : end];
  };
}

const COUNTERS: Record<EncodingName, (text: string) => number> = {
  o200k_base: bounded(countO200k),
  cl100k_base: bounded((text) => countCl100k(text)),
};

const ESTIMATE_FACTOR = 1.1;
const PER_MESSAGE = 3;
const PER_NAME = 1;
const REPLY_PRIMING = 3;
const PER_TOOL_CALL = 3;
/**
 * Counts of texts seen recently, per encoding, keyed by the text itself: a
 * conversation re-sent each turn hits for every text but the new ones, and a
 * map lookup is far cheaper than BPE (short texts included: a tool call's
 * name and arguments are counted on every turn) or a SHA-256 of the text.
 * Exact (the key is the whole text); bounded by the characters it holds.
 */
let memoMaxChars = 16 * 1024 * 1024;

const memos = new Map<string, LRUCache<string, number>>();

/**
 * Bounds the count memo (characters of text kept, over all encodings; the
 * server sets it from `--memo-max-bytes`). Counts memoized so far are dropped.
 */
export function setTokenMemoLimit(maxChars: number): void {
  memoMaxChars = Math.max(1024, Math.floor(maxChars));
  memos.clear();
  keptTexts.clear();
  tokenizers.clear();
}

/** Characters of text the count memo holds, the kept texts' included (`/metrics`). */
export function tokenMemoChars(): number {
  let n = 0;
  for (const memo of memos.values()) n += memo.calculatedSize;
  for (const texts of keptTexts.values()) for (const text of texts.keys()) n += text.length + 16;
  return n;
}

/** How many texts `Tokenizer.countKept` keeps per encoding. */
const KEPT_TEXTS = 8;

/**
 * Counts of the few texts outside the messages that every request sends
 * again (a client's tool list: ~60 KB of JSON for a coding agent), kept
 * apart from the count memo, which the texts of one long new conversation
 * can fill between two requests (its bound is a share of
 * `--memo-max-bytes`): then the tool list was counted again on every such
 * request (~0.9 ms each for a coding agent's).
 */
const keptTexts = new Map<string, LRUCache<string, number>>();

function keptFor(encoding: string): LRUCache<string, number> {
  let kept = keptTexts.get(encoding);
  if (!kept) {
    kept = new LRUCache<string, number>({ max: KEPT_TEXTS });
    keptTexts.set(encoding, kept);
  }
  return kept;
}

function memoFor(encoding: string): LRUCache<string, number> {
  let memo = memos.get(encoding);
  if (!memo) {
    memo = new LRUCache<string, number>({
      // shared by the encodings in use (one in almost every deployment)
      maxSize: memoMaxChars,
      sizeCalculation: (_n, text) => text.length + 16,
    });
    memos.set(encoding, memo);
  }
  return memo;
}

/** Tokens of one message as `countMessages` adds them, and the fields they were counted from. */
interface MessageCount {
  content: ChatMessage['content'];
  calls: ChatMessage['tool_calls'];
  name: ChatMessage['name'];
  n: number;
}

const countedByEncoding = new Map<string, WeakMap<ChatMessage, MessageCount>>();

/**
 * Counts per message object (per encoding): a conversation re-sent each turn
 * reaches the engine as the same message objects (the proxy reuses its parse,
 * see `formats/prefix-parse.ts`), so counting it costs one lookup per message
 * instead of rebuilding and looking up each text. A message whose content,
 * tool calls or name was replaced since is counted again; svc never edits
 * the parts of a message in place, and callers must not either.
 */
function countedFor(key: string): WeakMap<ChatMessage, MessageCount> {
  let table = countedByEncoding.get(key);
  if (!table) {
    table = new WeakMap();
    countedByEncoding.set(key, table);
  }
  return table;
}

/** Text of a message's content, as counted: text parts joined, other parts as their JSON. */
export function contentText(content: ChatMessage['content']): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  let out = '';
  for (const part of content) {
    if (part.type === 'text' && typeof part.text === 'string') out += part.text;
    else if (part.type === 'image_url' || part.type === 'image' || part.type === 'input_audio') out += '';
    else out += JSON.stringify(part);
  }
  return out;
}

/**
 * Tokens of `messages` as `countMessages` adds them, each text by `count`: a
 * message counted before (same content, calls and name) costs a lookup; with
 * `remember`, the counts made here are kept for the next call (only exact
 * ones: a bound is not a count).
 */
function sumMessages(
  messages: readonly ChatMessage[],
  counted: WeakMap<ChatMessage, MessageCount>,
  count: (text: string) => number,
  remember: boolean,
): number {
  let total = REPLY_PRIMING;
  for (const msg of messages) {
    const known = counted.get(msg);
    if (known && known.content === msg.content && known.calls === msg.tool_calls && known.name === msg.name) {
      total += known.n;
      continue;
    }
    let n = PER_MESSAGE + count(contentText(msg.content));
    if (msg.name) n += PER_NAME + count(msg.name);
    for (const call of msg.tool_calls ?? [])
      n += PER_TOOL_CALL + count(call.function?.name ?? '') + count(call.function?.arguments ?? '');
    if (remember) counted.set(msg, { content: msg.content, calls: msg.tool_calls, name: msg.name, n });
    total += n;
  }
  return total;
}

/** The tokenizer of each encoding (exact or estimating), made once: it depends on nothing else. */
const tokenizers = new Map<string, Tokenizer>();

/**
 * A tokenizer for a model. Counts of distinct texts are memoized by the text
 * (shared across calls, bounded), so a conversation re-sent each turn is
 * counted once per new piece of content (principle 4).
 */
export function tokenizerFor(model: string): Tokenizer {
  const { encoding, exact } = encodingForModel(model);
  const key = exact ? encoding : `${encoding}:estimate`;
  let tokenizer = tokenizers.get(key);
  if (!tokenizer) {
    tokenizer = makeTokenizer(encoding, exact);
    tokenizers.set(key, tokenizer);
  }
  return tokenizer;
}

/** A text's pre-tokens as far as they were counted. */
interface ChunkScan {
  text: string;
  /** Pre-tokens of `text` up to `end`. */
  chunks: number;
  /** Where the count stopped: `text.length` when it is complete. */
  end: number;
}

/**
 * Pre-tokens of a text by `scan` (see `Tokenizer.preTokens`), stopping at
 * `enough`. Every pre-token is at least one token; a long run is counted in
 * slices, and so are its pre-tokens (each slice's are at most its count).
 * The counts of the last two texts are kept, and a count stopped at its
 * `enough` goes on from where it stopped when more are asked for: the
 * router asks about an original and its compressed form in turns (is the
 * original big enough, then whether the compressed one is worth it), each
 * time with a larger `enough` for the original. The chunks found from
 * where a count stopped are those a count from the start finds (the split
 * decides a chunk by the text at and after its start only).
 */
function preTokenCounter(scan: ScanChunks): CountChunks {
  const sliced = bounded((text) => scan(text, 0, Number.POSITIVE_INFINITY)[0]);
  let last: ChunkScan | undefined;
  let before: ChunkScan | undefined;
  return (text, enough = Number.POSITIVE_INFINITY) => {
    let s: ChunkScan;
    if (last?.text === text) s = last;
    else {
      if (before?.text === text) s = before;
      else if (text.length >= LONG_RUN && mayHaveLongRun(text))
        s = { text, chunks: sliced(text), end: text.length };
      else s = { text, chunks: 0, end: 0 };
      before = last;
      last = s;
    }
    // an answer of at least `enough` stands (it may be more: a count asked for more before)
    if (s.end < text.length && s.chunks < enough) {
      const [n, end] = scan(text, s.end, enough - s.chunks);
      s.chunks += n;
      s.end = end;
    }
    return s.chunks;
  };
}

function makeTokenizer(encoding: EncodingName, exact: boolean): Tokenizer {
  const raw = COUNTERS[encoding];
  const memo = memoFor(encoding);
  const kept = keptFor(encoding);
  const counted = countedFor(exact ? encoding : `${encoding}:estimate`);
  const scaled = (n: number): number => (exact ? n : Math.ceil(n * ESTIMATE_FACTOR));
  const rawCount = (text: string): number => {
    let n = memo.get(text) ?? kept.get(text);
    if (n === undefined) {
      n = raw(text);
      memo.set(text, n);
    }
    return n;
  };
  const countText = (text: string): number => (text.length === 0 ? 0 : scaled(rawCount(text)));
  const countKept = (text: string): number => {
    if (text.length === 0) return 0;
    const n = rawCount(text);
    kept.set(text, n);
    return scaled(n);
  };
  const chunks = encoding === 'o200k_base' ? preTokenCounter(chunksO200k) : undefined;
  const preTokens = chunks && ((text: string, enough?: number): number => scaled(chunks(text, enough)));
  const atLeast = (text: string, enough = Number.POSITIVE_INFINITY): number => {
    if (text.length === 0) return 0;
    // pre-tokens up to a finite `enough` take less than a lookup: the memo is keyed by the text,
    // which V8 would hash (all of it, for a new text; see text-map.ts) to look it up
    if (preTokens && enough !== Number.POSITIVE_INFINITY) return preTokens(text, enough);
    const n = memo.get(text);
    if (n !== undefined) return scaled(n);
    return preTokens ? preTokens(text, enough) : countText(text);
  };
  // No token is shorter than a byte of UTF-8 (nor is a slice of a long run).
  const atMost = (text: string, known = true): number => {
    if (text.length === 0) return 0;
    const n = known ? memo.get(text) : undefined;
    return scaled(n ?? Buffer.byteLength(text, 'utf8'));
  };
  const bytesAtMost = (text: string): number => atMost(text, false);
  return {
    encoding: exact ? encoding : 'estimate',
    exact,
    countText,
    countKept,
    atLeast,
    atMost,
    ...(preTokens && { preTokens }),
    countMessagesAtMost: (messages, within) => {
      // the bytes alone first: looking a new text up among the counts has V8 hash all of it (text-map.ts)
      if (within !== undefined) {
        const loose = sumMessages(messages, counted, bytesAtMost, false);
        if (loose <= within) return loose;
      }
      return sumMessages(messages, counted, atMost, false);
    },
    countMessages: (messages) => sumMessages(messages, counted, countText, true),
  };
}
