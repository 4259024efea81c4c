/**
 * Word-level selection for ML compression (LLMLingua-2 style): the model
 * gives each word a keep-probability; the words with the highest
 * probability are kept until the target rate is met, in their original
 * order. Some words are always kept: digits, identifiers, paths and the
 * words of the latest user question. Pure functions, no runtime needed.
 */

/** A word of the input with its position. */
export interface Word {
  text: string;
  start: number;
  end: number;
}

const WORD_RE = /\S+/g;

/** Splits text into whitespace-separated words with offsets. */
export function splitWords(text: string): Word[] {
  const words: Word[] = [];
  for (const m of text.matchAll(WORD_RE))
    words.push({ text: m[0], start: m.index, end: m.index + m[0].length });
  return words;
}

const FORCED_RE = [
  /\d/, // numbers, versions, ids, timestamps
  /[A-Za-z][a-z0-9]*[A-Z]/, // camelCase
  /\w_\w/, // snake_case
  /[/\\]\w/, // paths
  /\w\.\w+\(|::|->|=>/, // calls, scopes
  /^[A-Z]{2,}[A-Z0-9_]*[,.;:]?$/, // CONSTANTS, acronyms
  /^[#@$%]\w/, // tags, mentions, variables
  /\w[.:]\w/, // dotted names, host:port
];

/** Normalizes a word for matching against the question: lower case, no surrounding punctuation. */
export function normalizeWord(word: string): string {
  return word.toLowerCase().replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
}

/** True for words that are never dropped. */
export function isForcedWord(word: string, questionWords: ReadonlySet<string>): boolean {
  if (FORCED_RE.some((re) => re.test(word))) return true;
  const norm = normalizeWord(word);
  return norm.length > 0 && questionWords.has(norm);
}

/** Function words never forced by the question (they carry no evidence). */
const QUESTION_STOP_WORDS = new Set(
  'the and for are was were with from this that these those what when where which who why how did does can could would should will not but all any its has have had you your our their there here into about after before than then them they been being'.split(
    ' ',
  ),
);

/** The set of content words of the latest user question (3+ letters, no function words). */
export function questionWordSet(question: string): Set<string> {
  const set = new Set<string>();
  for (const w of splitWords(question)) {
    const n = normalizeWord(w.text);
    if (n.length >= 3 && !QUESTION_STOP_WORDS.has(n)) set.add(n);
  }
  return set;
}

/**
 * Chooses the words to keep: all forced words, then the most probable others
 * until `rate` of the words are kept (ties broken by position, so the result
 * is deterministic). Returns kept indices in order.
 */
export function selectWords(
  words: readonly Word[],
  keepProb: readonly number[],
  rate: number,
  questionWords: ReadonlySet<string>,
): number[] {
  const target = Math.max(1, Math.round(words.length * rate));
  const keep = new Uint8Array(words.length);
  let kept = 0;
  words.forEach((w, i) => {
    if (isForcedWord(w.text, questionWords)) {
      keep[i] = 1;
      kept += 1;
    }
  });
  const rest = words
    .map((_, i) => i)
    .filter((i) => keep[i] === 0)
    .sort((a, b) => (keepProb[b] ?? 0) - (keepProb[a] ?? 0) || a - b);
  for (const i of rest) {
    if (kept >= target) break;
    keep[i] = 1;
    kept += 1;
  }
  const out: number[] = [];
  keep.forEach((k, i) => {
    if (k) out.push(i);
  });
  return out;
}

/** Joins kept words, keeping a line break wherever the dropped span between two kept words had one. */
export function joinWords(text: string, words: readonly Word[], kept: readonly number[]): string {
  let out = '';
  let prevEnd = -1;
  for (const i of kept) {
    const w = words[i]!;
    if (prevEnd >= 0) out += text.slice(prevEnd, w.start).includes('\n') ? '\n' : ' ';
    out += w.text;
    prevEnd = w.end;
  }
  return out;
}
