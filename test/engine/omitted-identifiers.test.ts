import { describe, expect, it } from 'vitest';
import { approxTokens } from '../../src/engine/compressors/lines.js';
import { omittedIdentifiersExcept, stableIdentifiers } from '../../src/engine/compressors/select.js';
import { extractIdentifiers, isNameLike } from '../../src/engine/identifiers.js';
import { NameSet } from '../../src/engine/known.js';
import { IDENTIFIER_PIECES, randomString, rng } from './helpers.js';

// The omitted part's index counts identifiers by their place in the text
// (issue 19); it must name exactly what counting them as strings names.

/** The index as strings give it: every occurrence cut out and looked up in a Map. */
function reference(
  texts: readonly string[],
  keep: Uint8Array,
  seen: { has(id: string): boolean },
  alsoSeen: ReadonlySet<string>,
  maxTokens: number,
  shownTexts: readonly string[] = texts,
): string[] {
  const counts = new Map<string, number>();
  for (let i = 0; i < texts.length; i++) {
    if (keep[i] && shownTexts[i] === texts[i]) continue;
    for (const id of stableIdentifiers(texts[i]!)) {
      const n = counts.get(id);
      if (n === undefined) counts.set(id, seen.has(id) || alsoSeen.has(id) || !isNameLike(id) ? 0 : 1);
      else if (n > 0) counts.set(id, n + 1);
    }
  }
  for (let i = 0; i < texts.length; i++) {
    if (!keep[i]) continue;
    for (const id of stableIdentifiers(shownTexts[i]!)) if (counts.get(id)) counts.set(id, 0);
  }
  const ranked = [...counts].filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
  const out: string[] = [];
  let used = 0;
  for (const [id] of ranked) {
    const cost = approxTokens(id) + 1;
    if (used + cost > maxTokens) continue;
    out.push(id);
    used += cost;
  }
  return out;
}

const ALPHABET = [
  ...IDENTIFIER_PIECES,
  'b',
  '→',
  'é',
  'src/app.ts',
  'pod-7f9c',
  'v1.2.3',
  '2025-01-02T03:04:05Z',
  '12.5',
  '404',
  'a1b2c3d4-e5f6-a7b8-c9d0-e1f2a3b4c5d6',
  'user_42',
  'ERR_CODE:',
];

describe('omittedIdentifiersExcept', () => {
  it('names what counting each occurrence as a string names, on generated lines', () => {
    const rand = rng(1919);
    for (let round = 0; round < 300; round++) {
      const n = 1 + Math.floor(rand() * 60);
      const texts = Array.from({ length: n }, () => randomString(rand, ALPHABET, Math.floor(rand() * 40)));
      // some lines repeated, so identifiers recur
      for (let k = 0; k < n / 3; k++) texts[Math.floor(rand() * n)] = texts[Math.floor(rand() * n)]!;
      const keep = Uint8Array.from(texts, () => (rand() < 0.3 ? 1 : 0));
      const shown = texts.map((t) => (rand() < 0.2 ? t.slice(0, Math.floor(t.length / 2)) : t));
      const earlier = new NameSet();
      earlier.addText(randomString(rand, ALPHABET, 30));
      const also = new Set(stableIdentifiers(texts[0]!).slice(0, 1));
      const budget = 5 + Math.floor(rand() * 80);
      expect(omittedIdentifiersExcept(texts, keep, earlier, also, budget, shown)).toEqual(
        reference(texts, keep, earlier, also, budget, shown),
      );
    }
  });

  it('counts many identifiers (the table grows) and keeps ties in order of first appearance', () => {
    const texts = Array.from(
      { length: 3000 },
      (_, i) => `GET /api/items/${i % 700} ok item_${i % 1300}.json`,
    );
    const keep = new Uint8Array(texts.length);
    keep[5] = 1;
    const got = omittedIdentifiersExcept(texts, keep, new Set(), new Set(), 200);
    expect(got).toEqual(reference(texts, keep, new Set(), new Set(), 200));
    expect(got.length).toBeGreaterThan(10);
  });
});

describe('the quick answers of the identifier filters', () => {
  // the forms as the regexes alone judge them (select.ts, identifiers.ts)
  const VOLATILE =
    /^(?:\d{4}-\d\d-\d\d[T ]\d\d:\d\d[\d:.,]*(?:Z|[+-]\d\d:?\d\d)?|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d+\.\d+(?:e[+-]?\d+)?|\d{1,5})$/i;
  const QUANTITY = /^\d+(?:\.\d+)?(?:[nµu]?s|ms|sec|secs|min|mins|[hdm]|[kmgtp]i?b|b|bytes|kbps|mbps|%|x)$/i;
  function nameLikeByRegex(id: string): boolean {
    const core = id.replace(/^[.:,;@#/-]+/, '');
    return core.length >= 5 && !/^\d+(?:\.\d+)?$/.test(core) && !QUANTITY.test(core);
  }

  it('leave out and keep what the regexes alone would, on generated identifiers', () => {
    const rand = rng(77);
    const parts = [...ALPHABET, 'F', 'e', 'E9', '1.5e', '+02', '300KB', '12ms', '::', '-.', '#7', '@x'];
    let volatile = 0;
    let plain = 0;
    for (let k = 0; k < 20_000; k++) {
      const line = randomString(rand, parts, 1 + Math.floor(rand() * 8));
      const ids = extractIdentifiers(line);
      expect(stableIdentifiers(line)).toEqual(line.length < 5 ? [] : ids.filter((id) => !VOLATILE.test(id)));
      for (const id of ids) {
        expect(isNameLike(id)).toBe(nameLikeByRegex(id));
        if (VOLATILE.test(id)) volatile++;
        if (!nameLikeByRegex(id)) plain++;
      }
    }
    // both kinds occur among them
    expect(volatile).toBeGreaterThan(100);
    expect(plain).toBeGreaterThan(100);
  });
});
