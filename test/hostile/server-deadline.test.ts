import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { lazyEngine } from '../../src/compression.js';
import {
  type MockUpstream,
  replyJson,
  startMockUpstream,
  startSvc,
  type TestSvc,
  until,
} from '../server/helpers.js';

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

const COMPLETION = {
  id: 'x',
  object: 'chat.completion',
  model: 'gpt-4o',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
};

/**
 * A chat request over an 8000-token limit: a user turn pasting a run of
 * `letters` letters (the context manager scores every message, so it reads
 * the run), tool rounds, a new question.
 */
function chatWithLetterRun(letters: number, letter = 'a'): string {
  const messages: unknown[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: `fix src/app.ts, the log says ${letter.repeat(letters)}` },
  ];
  for (let i = 0; i < 6; i++) {
    const output = `step ${i}: `.concat('ok '.repeat(1500));
    messages.push(
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: `c${i}`, type: 'function', function: { name: 'bash', arguments: `{"cmd":"step ${i}"}` } },
        ],
      },
      { role: 'tool', tool_call_id: `c${i}`, content: output },
    );
  }
  messages.push({ role: 'user', content: 'what failed?' });
  return JSON.stringify({ model: 'gpt-4o', messages });
}

/**
 * Polls `/health` from a worker thread (its own event loop, so the latency
 * measured is the server's alone) until `stop`; resolves with the latencies.
 */
function pollHealth(url: string): { started: Promise<void>; stop(): Promise<number[]> } {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
    let done = false;
    const latencies = [];
    parentPort.on('message', () => { done = true; });
    const health = async () => (await fetch(workerData + '/health')).arrayBuffer();
    (async () => {
      for (let i = 0; i < 5; i++) await health(); // warm: the worker's own HTTP client
      parentPort.postMessage('started');
      while (!done) {
        const start = performance.now();
        await health();
        latencies.push(performance.now() - start);
        await new Promise((r) => setTimeout(r, 2));
      }
      parentPort.postMessage(latencies);
    })();`,
    { eval: true, workerData: url },
  );
  const started = new Promise<void>((resolve) => worker.once('message', () => resolve()));
  return {
    started,
    async stop() {
      const result = new Promise<number[]>((resolve) => worker.once('message', (m: number[]) => resolve(m)));
      worker.postMessage('stop');
      const latencies = await result;
      await worker.terminate();
      return latencies;
    },
  };
}

async function post(url: string, body: string): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json' },
  });
}

describe('bounded work per request through the proxy (issue 15, item 1)', () => {
  it('an 80k-letter run over the context limit: answered within the engine budget while /health stays under 100 ms', async () => {
    const budgetMs = 3000;
    upstream = await startMockUpstream((_req, res) => replyJson(res, 200, COMPLETION));
    svc = await startSvc({
      flags: { 'compat-api-url': `${upstream.url}/v1`, 'context-limit': 8000, 'engine-timeout': budgetMs },
    });
    await lazyEngine.load();
    // warm-up: the tokenizer tables and the code paths of the context manager
    for (const letters of [100, 2000])
      expect((await post(svc.url, chatWithLetterRun(letters))).status).toBe(200);

    // Each attempt sends a fresh run (another letter: nothing memoized). The worst /health latency
    // of the best attempt must stay under 100 ms: before the fix every attempt blocked for seconds;
    // the best of three keeps CPU contention on a shared CI machine from failing it.
    const worst: number[] = [];
    for (const letter of ['b', 'c', 'd']) {
      const poller = pollHealth(svc.url);
      await poller.started;
      const start = performance.now();
      const res = await post(svc.url, chatWithLetterRun(80_000, letter));
      const elapsed = performance.now() - start;
      await res.arrayBuffer();
      const health = await poller.stop();
      expect(res.status).toBe(200);
      expect(elapsed).toBeLessThan(budgetMs);
      expect(health.length).toBeGreaterThan(0);
      worst.push(Math.max(...health));
      if (worst.at(-1)! < 100) break;
    }
    expect(Math.min(...worst)).toBeLessThan(100);
    await until(() => svc!.events.length === 2 + worst.length);
    // compressed by the engine, the context manager included, not forwarded after a timeout
    expect(svc.events.at(-1)).toMatchObject({ status: 200, compressionFailed: false });
    expect(svc.events.at(-1)?.transforms?.some((t) => t.startsWith('context:'))).toBe(true);
  });

  it('past the budget: the original request is forwarded untouched and counted as a compression failure', async () => {
    upstream = await startMockUpstream((_req, res) => replyJson(res, 200, COMPLETION));
    // every read of the server clock is 10 s later than the one before: any deadline passes at once
    let t = Date.now();
    svc = await startSvc({
      flags: { 'compat-api-url': `${upstream.url}/v1`, 'engine-timeout': 5000 },
      now: () => (t += 10_000),
    });
    const body = chatWithLetterRun(100);
    const res = await post(svc.url, body);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(COMPLETION);
    expect(upstream.requests[0]!.body.toString()).toBe(body);
    await until(() => svc!.events.length === 1);
    expect(svc.events[0]).toMatchObject({ compressionFailed: true });
    const stats = (await (await fetch(`${svc.url}/stats`)).json()) as {
      requests: { compression_failed: number };
    };
    expect(stats.requests.compression_failed).toBe(1);
  });

  it('/v1/compress past the budget answers 503 SVC_ENGINE_TIMEOUT', async () => {
    let t = Date.now();
    svc = await startSvc({ flags: { 'engine-timeout': 5000 }, now: () => (t += 10_000) });
    const res = await fetch(`${svc.url}/v1/compress`, {
      method: 'POST',
      body: chatWithLetterRun(100),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('x-svc-error')).toBe('SVC_ENGINE_TIMEOUT');
  });

  it('--engine-timeout 0 turns the budget off', async () => {
    upstream = await startMockUpstream((_req, res) => replyJson(res, 200, COMPLETION));
    let t = Date.now();
    svc = await startSvc({
      flags: { 'compat-api-url': `${upstream.url}/v1`, 'engine-timeout': 0 },
      now: () => (t += 10_000),
    });
    expect((await post(svc.url, chatWithLetterRun(100))).status).toBe(200);
    await until(() => svc!.events.length === 1);
    expect(svc.events[0]).toMatchObject({ compressionFailed: false });
  });
});
