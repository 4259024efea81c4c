import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { withOwnerRecords } from '../../src/ccr/owner.js';
import { putAll } from '../../src/ccr/store.js';
import { contentHash } from '../../src/engine/hash.js';
import { compressMessages } from '../../src/engine/index.js';
import { parseMarkers } from '../../src/engine/markers.js';
import { keyHash } from '../../src/server/auth.js';
import { agentSession, filler } from '../context/helpers.js';
import { startSvc, type TestSvc, until } from '../server/helpers.js';

let svc: TestSvc | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('retrieval endpoints', () => {
  it('a drop marker redeems to the exact original bytes, whole and by query', async () => {
    svc = await startSvc();
    const msgs = agentSession(40, 150).map((m, i) =>
      m.role === 'tool' ? { ...m, content: `needle${i}x ${m.content}` } : m,
    );
    const out = compressMessages(msgs, {
      model: 'gpt-4o',
      contextLimit: 6000,
      outputReserve: 0,
      compressFirst: false,
    });
    for (const [h, v] of out.ccrEntries) await svc.server.ctx.ccr.put(h, v);
    const k = out.messageOrigin.indexOf(-1);
    const [marker] = parseMarkers(String(out.result.messages[k]!.content));
    const from = out.messageOrigin[k - 1]! + 1;
    const dropped = msgs.slice(from, from + marker!.omitted);
    expect(out.messageOrigin[k + 1]).toBe(from + marker!.omitted);
    const original = out.ccrEntries.get(marker!.hash)!;

    const whole = await fetch(`${svc.url}/v1/retrieve/${marker!.hash}`);
    expect(whole.status).toBe(200);
    const w = await whole.json();
    expect(w.content).toBe(original);
    expect(w.content).toBe(JSON.stringify(dropped));

    const byPost = await (await post(`${svc.url}/v1/retrieve`, { hash: marker!.hash })).json();
    expect(byPost.content).toBe(original);

    const target = dropped.find((m) => m.role === 'tool')!;
    const needle = String(target.content).split(' ')[0]!;
    const q = await (await post(`${svc.url}/v1/retrieve`, { hash: marker!.hash, query: needle })).json();
    expect(q.match).toMatchObject({ unit: 'items', matched: 1, total: marker!.omitted });
    expect(q.content).toBe(`[${JSON.stringify(target)}]`);
  });

  it('a compressor marker redeems to the exact original text; a query returns matching lines', async () => {
    svc = await startSvc();
    const text = Array.from({ length: 50 }, (_, i) =>
      i === 17 ? 'ERROR: disk full on /var' : `INFO line ${i} ok`,
    ).join('\n');
    const hash = contentHash(text);
    await svc.server.ctx.ccr.put(hash, text);
    expect((await (await fetch(`${svc.url}/v1/retrieve/${hash}`)).json()).content).toBe(text);
    const q = await (
      await fetch(`${svc.url}/v1/retrieve/${hash}?query=${encodeURIComponent('disk full')}`)
    ).json();
    expect(q).toMatchObject({
      content: 'ERROR: disk full on /var',
      match: { unit: 'lines', matched: 1, total: 50 },
    });
  });

  it('unknown or expired hash: 404 that says so; malformed: 400', async () => {
    svc = await startSvc();
    const events: boolean[] = [];
    svc.server.ctx.bus.on('retrieved', (e) => events.push(e.found));
    const res = await fetch(`${svc.url}/v1/retrieve/${'a'.repeat(24)}`);
    expect(res.status).toBe(404);
    expect((await res.json()).error.message).toMatch(/unknown or expired/);
    expect((await post(`${svc.url}/v1/retrieve`, { hash: 'nope' })).status).toBe(400);
    expect((await post(`${svc.url}/v1/retrieve`, { query: 'x' })).status).toBe(400);
    expect((await post(`${svc.url}/v1/retrieve`, 'not json')).status).toBe(400);
    expect(events).toEqual([false]);
  });

  it('needs a key when keys are configured', async () => {
    svc = await startSvc({ flags: { 'api-key': ['secret'] } });
    const hash = contentHash('x');
    // stored by the client of key `secret` (with keys, entries belong to their owner: issue 15)
    await putAll(svc.server.ctx.ccr, withOwnerRecords(new Map([[hash, 'x']]), keyHash('secret')!));
    expect((await fetch(`${svc.url}/v1/retrieve/${hash}`)).status).toBe(401);
    expect(
      (await fetch(`${svc.url}/v1/retrieve/${hash}`, { headers: { authorization: 'Bearer secret' } })).status,
    ).toBe(200);
  });

  it('GET /v1/toin shows what TOIN learned from compressions, drops and retrievals, and it is written on close', async () => {
    // with a key: TOIN learns from authenticated endpoint retrievals only (issue 15)
    svc = await startSvc({ flags: { 'api-key': ['sk-svc'] } });
    const auth = { authorization: 'Bearer sk-svc' };
    const output = JSON.stringify(
      Array.from({ length: 60 }, (_, i) => ({
        id: i,
        status: i === 7 ? 'failed' : 'ok',
        title: `item ${i} ${filler(i, 8)}`,
      })),
    );
    const messages = [
      { role: 'user', content: 'list jobs' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list_jobs', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: output },
      { role: 'user', content: 'which failed?' },
    ];
    const res = await post(`${svc.url}/v1/compress`, { model: 'gpt-4o', messages }, auth);
    const result = await res.json();
    expect(result.ccr_hashes.length).toBeGreaterThan(0);
    await post(`${svc.url}/v1/retrieve`, { hash: result.ccr_hashes[0], query: 'status=failed' }, auth);
    let view: { shapes: Array<Record<string, unknown>> } = { shapes: [] };
    await until(() => view.shapes.length > 0 && view.shapes[0]!.retrieved === 1, 1000).catch(() => undefined);
    view = await (await fetch(`${svc.url}/v1/toin`, { headers: auth })).json();
    expect(view.shapes[0]).toMatchObject({
      tool: 'list_jobs',
      compressed: 1,
      retrieved: 1,
      retrieved_fields: { status: 1 },
      fields: ['id', 'status', 'title'],
    });
    const home = svc.home;
    await svc.server.close(100);
    const file = JSON.parse(await readFile(join(home, 'toin.json'), 'utf8'));
    expect(Object.values(file.shapes)[0]).toMatchObject({ tool: 'list_jobs', compressed: 1, retrieved: 1 });
  });
});

describe("svc's own /v1 endpoints never go upstream", () => {
  it('answers a wrong method on /v1/retrieve and /v1/toin itself (404), without calling the upstream', async () => {
    const { startMockUpstream } = await import('../server/helpers.js');
    const upstream = await startMockUpstream((_req, res) => {
      res.end('upstream');
    });
    try {
      svc = await startSvc({
        flags: { 'compat-api-url': `${upstream.url}/v1`, 'messages-api-url': `${upstream.url}/v1` },
      });
      for (const [method, path] of [
        ['DELETE', `/v1/retrieve/${'a'.repeat(24)}`],
        ['PUT', '/v1/retrieve'],
        ['POST', '/v1/toin'],
      ] as const) {
        const res = await fetch(`${svc.url}${path}`, { method });
        expect(res.status).toBe(404);
      }
      expect(upstream.requests).toHaveLength(0);
    } finally {
      await upstream.close();
    }
  });
});
