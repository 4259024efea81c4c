import { stem, terms } from './text.js';

/** BM25 parameters (Robertson/Sparck Jones defaults). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/**
 * Okapi BM25 score of each document against a query. Documents and query are
 * raw texts; they are split with `terms` and stemmed. Returns raw scores
 * (0 for no shared term); IDF uses the "+1" form so it is never negative.
 *
 * @example bm25Scores(['disk full on /var', 'all good'], 'why is the disk full') // [>0, 0]
 */
export function bm25Scores(documents: readonly string[], query: string): number[] {
  const queryTerms = [...new Set(terms(query).map(stem))];
  if (queryTerms.length === 0 || documents.length === 0) return documents.map(() => 0);
  const wanted = new Set(queryTerms);
  const freqs: Array<Map<string, number>> = [];
  const lengths: number[] = [];
  const docFreq = new Map<string, number>();
  for (const doc of documents) {
    const tf = new Map<string, number>();
    const docTerms = terms(doc);
    for (const t of docTerms) {
      const s = stem(t);
      if (wanted.has(s)) tf.set(s, (tf.get(s) ?? 0) + 1);
    }
    for (const s of tf.keys()) docFreq.set(s, (docFreq.get(s) ?? 0) + 1);
    freqs.push(tf);
    lengths.push(docTerms.length);
  }
  const n = documents.length;
  const avgLength = lengths.reduce((a, b) => a + b, 0) / n || 1;
  return freqs.map((tf, d) => {
    let score = 0;
    for (const q of queryTerms) {
      const f = tf.get(q);
      if (!f) continue;
      const df = docFreq.get(q) ?? 0;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      score +=
        (idf * (f * (BM25_K1 + 1))) / (f + BM25_K1 * (1 - BM25_B + (BM25_B * lengths[d]!) / avgLength));
    }
    return score;
  });
}
