import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeCompress } from './fake-engine.js';
import { type MockUpstream, startMockUpstream, startSvc, type TestSvc, until } from './helpers.js';

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

const BODY = JSON.stringify({
  model: 'claude-sonnet-4-5',
  max_tokens: 9,
  messages: [{ role: 'user', content: 'hi' }],
});

/** An upstream answering with `chunks` pieces of 64 KiB of JSON text, written as fast as it can; `closed` when its response closes. */
function bigAnswer(chunks: number) {
  const piece = 'x'.repeat(64 * 1024);
  let closed!: () => void;
  const gone = new Promise<void>((r) => (closed = r));
  const expected = `{"id":"msg","usage":{"input_tokens":3,"output_tokens":1},"pad":"${piece.repeat(chunks)}"}`;
  const handler = async (_req: unknown, res: import('node:http').ServerResponse) => {
    res.on('close', () => closed());
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(`{"id":"msg","usage":{"input_tokens":3,"output_tokens":1},"pad":"`);
    for (let i = 0; i < chunks; i++) {
      if (!res.write(piece)) await new Promise((r) => res.once('drain', r));
      if (res.destroyed) return;
    }
    res.end('"}');
  };
  return { handler, expected, gone };
}

/** POSTs BODY to svc and reads the answer slowly: a pause every `pauseEvery` chunks. */
function slowRead(url: string, onChunk: (n: number) => boolean): Promise<{ text: string; cut: boolean }> {
  return new Promise((resolve) => {
    const req = request(`${url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test' },
    });
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      let n = 0;
      res.on('data', (c: Buffer) => {
        parts.push(c);
        n += 1;
        if (!onChunk(n)) {
          req.destroy();
          resolve({ text: Buffer.concat(parts).toString('utf8'), cut: true });
          return;
        }
        if (n % 4 === 0) {
          res.pause();
          setTimeout(() => res.resume(), 5);
        }
      });
      res.on('end', () => resolve({ text: Buffer.concat(parts).toString('utf8'), cut: false }));
    });
    req.on('error', () => undefined);
    req.end(BODY);
  });
}

describe('relaying the answer', () => {
  it('gives a slow client the whole answer, byte for byte, with its usage read on the side', async () => {
    const answer = bigAnswer(120);
    upstream = await startMockUpstream(answer.handler);
    svc = await startSvc({
      compress: createFakeCompress(),
      flags: { 'messages-api-url': `${upstream.url}/v1` },
    });
    const got = await slowRead(svc.url, () => true);
    expect(got.cut).toBe(false);
    expect(got.text).toBe(answer.expected);
    await until(() => svc!.events.length === 1);
    expect(svc.events[0]).toMatchObject({ status: 200, usage: { input: 3, output: 1 } });
  });

  it('stops reading the upstream when a slow client goes away mid-answer', async () => {
    const answer = bigAnswer(4000);
    upstream = await startMockUpstream(answer.handler);
    svc = await startSvc({
      compress: createFakeCompress(),
      flags: { 'messages-api-url': `${upstream.url}/v1` },
    });
    const got = await slowRead(svc.url, (n) => n < 20);
    expect(got.cut).toBe(true);
    // the test times out if the upstream answer is never dropped
    await answer.gone;
    await until(() => svc!.events.length === 1);
  });
});
