import { afterEach, describe, expect, it } from 'vitest';
import { startSvc, type TestSvc } from '../server/helpers.js';

let svc: TestSvc | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

const post = (path: string, body: unknown, key: string) =>
  fetch(`${svc!.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });

/** A conversation whose tool output the engine compresses (its original goes to CCR). */
const messages = [
  { role: 'user', content: 'list jobs' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list_jobs', arguments: '{}' } }],
  },
  {
    role: 'tool',
    tool_call_id: 'c1',
    content: JSON.stringify(
      Array.from({ length: 60 }, (_, i) => ({
        id: i,
        status: i === 7 ? 'failed' : 'ok',
        note: `job ${i} ran the nightly batch`,
      })),
    ),
  },
  { role: 'user', content: 'which failed?' },
];

describe('CCR originals belong to their owner (issue 15, item 5)', () => {
  it('with API keys, an entry is readable by the key that stored it and by no other', async () => {
    svc = await startSvc({ flags: { 'api-key': ['sk-a', 'sk-b'] } });
    const result = (await (await post('/v1/compress', { model: 'gpt-4o', messages }, 'sk-a')).json()) as {
      ccr_hashes: string[];
    };
    const hash = result.ccr_hashes[0]!;
    expect(hash).toMatch(/^[0-9a-f]{24}$/);
    const own = await fetch(`${svc.url}/v1/retrieve/${hash}`, { headers: { authorization: 'Bearer sk-a' } });
    expect(own.status).toBe(200);
    expect(((await own.json()) as { content: string }).content).toBe(messages[2]!.content);
    const other = await fetch(`${svc.url}/v1/retrieve/${hash}`, {
      headers: { authorization: 'Bearer sk-b' },
    });
    expect(other.status).toBe(404);
    expect((await post('/v1/retrieve', { hash }, 'sk-b')).status).toBe(404);
    const anonymous = await fetch(`${svc.url}/v1/retrieve/${hash}`);
    expect(anonymous.status).toBe(401);
  });
});
