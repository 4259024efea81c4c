import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { priceRequest, usageCost } from '../../src/stats/cost.js';
import { loadPricing, matchModel, priceFor, SHIPPED_PRICING_PATH } from '../../src/stats/pricing.js';
import { finishedEvent, tempHome } from './helpers.js';

const table = loadPricing();
let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe('pricing table', () => {
  it('ships source and as_of with OpenAI and Anthropic models', () => {
    const doc = JSON.parse(readFileSync(SHIPPED_PRICING_PATH, 'utf8'));
    expect(doc.source).toMatch(/claude\.com.*openai\.com/);
    expect(doc.as_of).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(table.asOf).toBe(doc.as_of);
    for (const m of [
      'gpt-4o',
      'gpt-4.1',
      'gpt-5',
      'claude-opus-4-8',
      'claude-sonnet-4-5',
      'claude-sonnet-4-5-20250929',
      'claude-opus-4-1',
      'claude-haiku-4-5',
      'claude-haiku-4-5-20251001',
    ]) {
      expect(table.prices.has(m), m).toBe(true);
    }
  });

  it.each([
    ['gpt-4o', 'gpt-4o'],
    ['gpt-4o-2024-08-06', 'gpt-4o-2024-08-06'],
    ['gpt-4o-mini-2024-07-18', 'gpt-4o-mini-2024-07-18'],
    ['openai/gpt-4.1', 'gpt-4.1'],
    ['claude-sonnet-4-5-20250929', 'claude-sonnet-4-5-20250929'],
    ['claude-sonnet-4-5', 'claude-sonnet-4-5'],
    ['claude-opus-4-8', 'claude-opus-4-8'],
    ['us.anthropic.claude-haiku-4-5-20251001-v1:0', 'claude-haiku-4-5-20251001'],
    ['claude-sonnet-4-5@20250929', 'claude-sonnet-4-5-20250929'],
    ['anthropic.claude-opus-4-8', 'claude-opus-4-8'],
    ['GPT-4O', 'gpt-4o'],
  ])('matches %s to %s', (model, key) => {
    expect(matchModel(table, model)).toBe(key);
  });

  it.each([
    'llama-3-70b',
    'gpt-4.5-preview-x',
    'gpt-4o1',
    'claude',
    '',
    // No prefix guessing: an id the table does not list is unknown, however close.
    'claude-opus-4-9',
    'claude-opus-5-5',
    'claude-opus-4',
    'gpt-4o-2099-01-01',
    'claude-sonnet-4-5-latest',
  ])('knows nothing of %j', (model) => {
    expect(matchModel(table, model)).toBeUndefined();
  });

  it('prices the same model and its documented aliases alike, with the 1-hour write rate', () => {
    expect(priceFor(table, 'claude-sonnet-4-5')).toBe(priceFor(table, 'claude-sonnet-4-5-20250929'));
    expect(priceFor(table, 'claude-opus-4-8')).toEqual({
      input: 5,
      output: 25,
      cacheRead: 0.5,
      cacheWrite: 6.25,
      cacheWrite1h: 10,
    });
    // OpenAI bills cache writes as input; no 1-hour tier.
    expect(priceFor(table, 'gpt-4o')?.cacheWrite1h).toBe(2.5);
  });

  it('merges a SERVICE_PRICING_PATH table over the shipped one', async () => {
    const t = await tempHome();
    cleanup = t.cleanup;
    const file = join(t.home, 'prices.json');
    await writeFile(
      file,
      JSON.stringify({
        source: 'my contract',
        as_of: '2026-01-01',
        models: {
          'gpt-4o': { input: 1, output: 2, cache_read: 0.5, cache_write: 1 },
          'llama-3-70b': { input: 0.6, output: 0.6 },
        },
      }),
    );
    const merged = loadPricing({ pricingPath: file });
    expect(priceFor(merged, 'gpt-4o')).toEqual({
      input: 1,
      output: 2,
      cacheRead: 0.5,
      cacheWrite: 1,
      cacheWrite1h: 1,
    });
    expect(priceFor(merged, 'llama-3-70b')).toEqual({
      input: 0.6,
      output: 0.6,
      cacheRead: 0.6,
      cacheWrite: 0.6,
      cacheWrite1h: 0.6,
    });
    expect(priceFor(merged, 'claude-sonnet-4-5')?.input).toBe(3);
    expect(merged.asOf).toBe('2026-01-01');
    expect(merged.source).toBe('my contract');
  });

  it.each([
    ['not json', '{', /cannot read it as JSON/],
    ['no models', '{"source":"x"}', /"models" must be an object/],
    [
      'negative price',
      '{"models":{"m":{"input":-1,"output":1}}}',
      /models\["m"\]\.input must be a number >= 0/,
    ],
    ['text price', '{"models":{"m":{"input":1,"output":"2"}}}', /models\["m"\]\.output/],
  ])('refuses a bad override (%s) naming the file and entry', async (_name, text, message) => {
    const t = await tempHome();
    cleanup = t.cleanup;
    const file = join(t.home, 'prices.json');
    await writeFile(file, text);
    expect(() => loadPricing({ pricingPath: file })).toThrow(message);
    try {
      loadPricing({ pricingPath: file });
    } catch (err) {
      expect((err as { code: string }).code).toBe('SVC_BAD_CONFIG');
      expect((err as Error).message).toContain(file);
    }
  });
});

describe('request cost', () => {
  const price = priceFor(table, 'claude-sonnet-4-5')!;

  it('prices 1-hour cache writes at their own rate, the rest of the writes at the 5-minute rate', () => {
    const opus = priceFor(table, 'claude-opus-4-8')!;
    const usage = { input: 100, output: 50, cacheRead: 10_000, cacheWrite: 3000, cacheWrite1h: 1000 };
    // 100*5 + 50*25 + 10000*0.5 + 2000*6.25 + 1000*10 = 500 + 1250 + 5000 + 12500 + 10000 = 29250 per million
    expect(usageCost(opus, usage)).toBeCloseTo(0.02925, 12);
    // Without the split every write is a 5-minute write: 3000*6.25 = 18750 -> 25500 per million.
    expect(usageCost(opus, { ...usage, cacheWrite1h: undefined })).toBeCloseTo(0.0255, 12);
  });

  it('prices reported usage with cache reads and writes at their own rates', () => {
    const usage = { input: 1000, output: 500, cacheRead: 20_000, cacheWrite: 4000 };
    // 1000*3 + 500*15 + 20000*0.3 + 4000*3.75 = 3000 + 7500 + 6000 + 15000 = 31500 per million
    expect(usageCost(price, usage)).toBeCloseTo(0.0315, 12);
    const cost = priceRequest(
      table,
      finishedEvent({ model: 'claude-sonnet-4-5-20250929', usage, tokensSaved: 2000 }),
    );
    expect(cost.costUsd).toBeCloseTo(0.0315, 12);
    expect(cost.savingsUsd).toBeCloseTo(0.006, 12); // 2000 x $3/M
    expect(cost.estimated).toBe(false);
    expect(cost.modelKey).toBe('claude-sonnet-4-5-20250929');
  });

  it('falls back to the counted tokens sent when no usage was reported', () => {
    const cost = priceRequest(table, finishedEvent({ model: 'gpt-4o', usage: undefined, tokensAfter: 4000 }));
    expect(cost.costUsd).toBeCloseTo(0.01, 12); // 4000 x $2.5/M
    expect(cost.estimated).toBe(true);
  });

  it('reports an unknown model as unknown cost, never 0', () => {
    const cost = priceRequest(table, finishedEvent({ model: 'mystery-1' }));
    expect(cost.costUsd).toBeUndefined();
    expect(cost.savingsUsd).toBeUndefined();
    expect(cost.modelKey).toBeUndefined();
  });

  it('charges nothing for cached answers, svc errors and upstream errors without usage', () => {
    expect(
      priceRequest(table, finishedEvent({ cached: true, mode: 'cached', upstreamStatus: undefined })).costUsd,
    ).toBe(0);
    expect(
      priceRequest(
        table,
        finishedEvent({ status: 429, upstreamStatus: undefined, usage: undefined, rateLimited: true }),
      ).costUsd,
    ).toBe(0);
    expect(
      priceRequest(table, finishedEvent({ status: 500, upstreamStatus: 500, usage: undefined })).costUsd,
    ).toBe(0);
    const c = priceRequest(
      table,
      finishedEvent({ status: 500, upstreamStatus: 500, usage: undefined, tokensSaved: 10 }),
    );
    expect(c.savingsUsd).toBe(0); // a failed request saved nothing
  });
});
