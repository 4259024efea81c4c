import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type MockUpstream, startMockUpstream, startSvc, until } from '../server/helpers.js';
import { startSse } from '../server/sse-mocks.js';

let upstream: MockUpstream | undefined;
let dir: string | undefined;
afterEach(async () => {
  await upstream?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  upstream = dir = undefined;
});

describe('shutdown (issue 15, item 7)', () => {
  it('requests cut at the end of the grace period are in the request log', async () => {
    // an upstream that starts a stream and never ends it, and one that never answers
    upstream = await startMockUpstream((req, res) => {
      if (req.url.includes('chat')) {
        startSse(res);
        res.write('data: {"id":"c","object":"chat.completion.chunk","choices":[]}\n\n');
      }
    });
    dir = mkdtempSync(join(tmpdir(), 'svc-shutdown-log-'));
    const logFile = join(dir, 'requests.jsonl');
    const svc = await startSvc({
      flags: {
        'compat-api-url': `${upstream.url}/v1`,
        'messages-api-url': `${upstream.url}/v1`,
        'log-file': logFile,
      },
    });
    const streaming = fetch(`${svc.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-1' },
      body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    })
      .then(async (res) => {
        await res.text();
      })
      .catch(() => undefined);
    const waiting = fetch(`${svc.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-1' },
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    }).catch(() => undefined);
    await until(() => upstream!.requests.length === 2, 5_000);
    await svc.close(); // grace 1 s, then every connection is cut
    await Promise.allSettled([streaming, waiting]);
    const lines = readFileSync(logFile, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { path: string; status: number });
    expect(lines.every((l) => l.status === 499)).toBe(true);
    expect(lines.map((l) => l.path).sort()).toEqual(['/v1/chat/completions', '/v1/messages']);
    expect(svc.events).toHaveLength(2);
  });
});
