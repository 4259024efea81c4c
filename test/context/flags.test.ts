import { afterEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/index.js';
import { startSvc, type TestSvc } from '../server/helpers.js';
import { agentSession } from './helpers.js';

let svc: TestSvc | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

/** transforms_applied of /v1/compress for an over-limit session, under the given serve flags. */
async function transforms(flags: Record<string, unknown>): Promise<string[]> {
  svc = await startSvc({ flags: { 'context-limit': 8000, ...flags } });
  const messages = agentSession(60, 120).map((m) =>
    m.role === 'tool'
      ? {
          ...m,
          content: Array.from(
            { length: 30 },
            (_, k) => `${m.tool_call_id} line ${k} ${String(m.content).slice(k * 20, k * 20 + 40)}`,
          ).join('\n'),
        }
      : m,
  );
  const res = await fetch(`${svc.url}/v1/compress`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o', messages }),
  });
  const body = await res.json();
  expect(body.tokens_after).toBeLessThanOrEqual(8000 - 4096);
  await svc.close();
  svc = undefined;
  return body.transforms_applied;
}

describe('the three flags, through the server', () => {
  it('default: compress harder first, then drop by score', async () => {
    const t = await transforms({});
    expect(t.some((x) => x.startsWith('context:compress_harder:'))).toBe(true);
    expect(t.some((x) => x.startsWith('context:drop:intelligent:'))).toBe(true);
  });
  it('--no-compress-first: drops without compressing harder', async () => {
    const t = await transforms({ 'compress-first': false });
    expect(t.some((x) => x.startsWith('context:compress_harder'))).toBe(false);
    expect(t.some((x) => x.startsWith('context:drop:intelligent:'))).toBe(true);
  });
  it('--no-intelligent-scoring: position-based drops', async () => {
    expect(
      (await transforms({ 'intelligent-scoring': false })).some((x) =>
        x.startsWith('context:drop:position:'),
      ),
    ).toBe(true);
  });
  it('--no-intelligent-context: the legacy rolling window', async () => {
    expect(
      (await transforms({ 'intelligent-context': false })).some((x) =>
        x.startsWith('context:drop:rolling_window:'),
      ),
    ).toBe(true);
  });
  it('--score-weights is validated at start', () => {
    expect(() => resolveConfig({ flags: { 'score-weights': 'speed=2' }, env: {} })).toThrow(/speed=2/);
    expect(resolveConfig({ flags: { 'score-weights': 'recency=2,errors=0' }, env: {} }).scoreWeights).toBe(
      'recency=2,errors=0',
    );
  });
});
