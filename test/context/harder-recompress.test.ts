import { describe, expect, it } from 'vitest';
import { compressJson } from '../../src/engine/compressors/json.js';
import { harderCompressor } from '../../src/engine/context/harder.js';
import { contentHash } from '../../src/engine/hash.js';
import { compressMessages } from '../../src/engine/index.js';
import { parseMarkers } from '../../src/engine/markers.js';
import type { ChatMessage } from '../../src/engine/types.js';
import { assistant, call, result, sys, toolPairsIntact, user } from './helpers.js';

/** A big JSON tool output: 300 records, one of them an error. */
const items = Array.from({ length: 300 }, (_, k) => ({
  id: `order-${1000 + k}`,
  status: k === 137 ? 'failed' : 'shipped',
  customer: `customer_${(k * 37) % 101}`,
  total: (k * 13) % 977,
  note: `batch ${k % 7} region eu-west-${k % 3}`,
}));
const bigJson = JSON.stringify(items, null, 2);

function session(): ChatMessage[] {
  return [
    sys('You are a support agent.'),
    user('Which orders failed?'),
    call('c1', 'list_orders', { limit: 300 }),
    result('c1', bigJson),
    assistant('Order order-1137 failed.'),
    call('c2', 'get_order', { id: 'order-1137' }),
    result('c2', '{"id":"order-1137","status":"failed","reason":"card declined"}'),
    // later turns: the JSON output is older than the protected recent turns
    ...Array.from({ length: 5 }, (_, k) => [user(`Question ${k}?`), assistant(`Answer ${k}.`)]).flat(),
    user('Retry it please.'),
  ];
}

const text = (m: ChatMessage | undefined) => (typeof m?.content === 'string' ? m.content : '');

describe('compress-harder re-runs the compressor with lower caps', () => {
  const msgs = session();
  const free = compressMessages(msgs, { model: 'gpt-4o' });
  const before = free.result.tokens_after;

  it('brings an over-limit conversation under the limit without dropping', () => {
    const limit = before - 150;
    const out = compressMessages(msgs, { model: 'gpt-4o', contextLimit: limit, outputReserve: 0 });
    expect(out.result.tokens_after).toBeLessThanOrEqual(limit);
    expect(out.result.messages).toHaveLength(msgs.length);
    const applied = out.result.transforms_applied.join(' ');
    expect(applied).toMatch(/context:compress_harder:/);
    expect(applied).not.toMatch(/context:drop/);
    expect(toolPairsIntact(out.result.messages)).toBe(true);

    // the JSON output is the JSON compressor's answer at half its caps: valid JSON, original items only
    const harder = text(out.result.messages[3]);
    const expected = compressJson(bigJson, {
      hash: contentHash(bigJson),
      userTerms: [],
      seen: new Set(),
      earlierLines: () => new Set(),
      earlierJson: () => new Set(),
      earlierEntities: () => new Map(),
      earlierLinkShapes: () => new Set(),
      capScale: 0.5,
    });
    expect(harder).toBe(expected?.text);
    expect(harder.length).toBeLessThan(text(free.result.messages[3]).length);
    const markers = parseMarkers(harder);
    expect(markers.map((m) => m.hash)).toContain(contentHash(bigJson));
    expect(out.ccrEntries.get(contentHash(bigJson))).toBe(bigJson);
    const body = harder.slice(0, harder.indexOf('\n[svc') >= 0 ? harder.indexOf('\n[svc') : undefined);
    // the compressor renders uniform records as columns + rows: rebuild them
    const kept = JSON.parse(body) as { $columns: string[]; $rows: unknown[][] };
    const objects = kept.$rows.map((row) => Object.fromEntries(kept.$columns.map((c, j) => [c, row[j]])));
    const originals = new Set(items.map((i) => JSON.stringify(i)));
    expect(objects.length).toBeGreaterThan(0);
    expect(objects.length).toBeLessThan(items.length);
    for (const k of objects) expect(originals.has(JSON.stringify(k))).toBe(true);
    expect(objects.some((k) => (k as { status: string }).status === 'failed')).toBe(true);

    // system prompt and latest user message untouched
    expect(out.result.messages[0]).toEqual(msgs[0]);
    expect(out.result.messages.at(-1)).toEqual(msgs.at(-1));
  });

  it('drops instead with --no-compress-first', () => {
    const limit = before - 150;
    const out = compressMessages(msgs, {
      model: 'gpt-4o',
      contextLimit: limit,
      outputReserve: 0,
      compressFirst: false,
    });
    expect(out.result.tokens_after).toBeLessThanOrEqual(limit);
    const applied = out.result.transforms_applied.join(' ');
    expect(applied).not.toMatch(/compress_harder/);
    expect(applied).toMatch(/context:drop/);
    expect(toolPairsIntact(out.result.messages)).toBe(true);
  });

  it('falls back to the generic cut when the compressor cannot go lower', () => {
    // plain text of long words: the harder result is a line cut of the current text
    const lines = Array.from({ length: 60 }, (_, k) => `line ${k} ${'x'.repeat(30)} value_${k}`).join('\n');
    const m: ChatMessage[] = [result('c1', lines)];
    const out = harderCompressor(m, m)(0, 1);
    expect(out).toBeDefined();
    expect(parseMarkers(text(out?.message)).map((x) => x.hash)).toContain(contentHash(lines));
    expect(out?.ccrEntries.get(contentHash(lines))).toBe(lines);
    expect(out?.transforms).toEqual(['context:harder:1']);
  });

  it('is deterministic', () => {
    const limit = before - 150;
    const a = compressMessages(msgs, { model: 'gpt-4o', contextLimit: limit, outputReserve: 0 });
    const b = compressMessages(session(), { model: 'gpt-4o', contextLimit: limit, outputReserve: 0 });
    expect(b.result.messages).toEqual(a.result.messages);
  });
});
