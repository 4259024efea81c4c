import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { contentHash } from '../../src/engine/hash.js';
import { parseMarkers } from '../../src/engine/markers.js';
import { parsePrometheusText } from '../stats/prom-text.js';
import { type MockUpstream, replyJson, startMockUpstream, startSvc, type TestSvc } from './helpers.js';
import { CHAT_REPLY } from './sse-mocks.js';

// Past --ccr-memory-max-bytes the server moves the least recently used originals to a spill file
// (issue 19): memory stays within the bound and every marker stays redeemable.

const SAMPLE = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../fixtures/samples/agent-session.json'), 'utf8'),
) as { model: string; messages: Array<{ role: string; content: string }> };

/** The sample conversation as a new one: every tool output made unique. */
function conversation(n: number): string {
  const messages = SAMPLE.messages.map((m) =>
    m.role === 'tool' || m.role === 'user' ? { ...m, content: `[conversation ${n}] ${m.content}` } : m,
  );
  return JSON.stringify({ ...SAMPLE, messages });
}

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

describe('the in-memory CCR store past --ccr-memory-max-bytes', () => {
  it('moves the oldest originals to its spill file: memory stays bounded, every marker redeems', async () => {
    upstream = await startMockUpstream((_req, res) => replyJson(res, 200, CHAT_REPLY));
    const cap = 1024 * 1024;
    svc = await startSvc({
      flags: {
        'compat-api-url': `${upstream.url}/v1`,
        'ccr-memory-max-bytes': String(cap),
        'rate-limit': false,
        cache: false,
      },
    });
    const conversations = 80;
    for (let n = 0; n < conversations; n++) {
      const res = await fetch(`${svc.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
        body: conversation(n),
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const first = parseMarkers(upstream.requests[0]!.body.toString('utf8'));
    const all = upstream.requests.flatMap((r) => parseMarkers(r.body.toString('utf8')));
    expect(first.length).toBeGreaterThan(0);
    // more originals than the memory holds went through
    let stored = 0;
    for (const m of new Set(all.map((m) => m.hash))) {
      const res = await fetch(`${svc.url}/v1/retrieve/${m}`);
      expect(res.status).toBe(200);
      const { content } = (await res.json()) as { content: string };
      expect(contentHash(content)).toBe(m);
      stored += content.length;
    }
    // more than memory holds: the oldest were read back from the spill file
    expect(stored).toBeGreaterThan(2 * cap);
    const metrics = parsePrometheusText(await (await fetch(`${svc.url}/metrics`)).text());
    const ccr = metrics.get('service_memory_bytes')!.samples.find((s) => s.labels.part === 'ccr')!.value;
    expect(ccr).toBeGreaterThan(0);
    expect(ccr).toBeLessThanOrEqual(2 * cap);
  });
});
