import { afterEach, describe, expect, it } from 'vitest';
import type { CcrStore } from '../../src/ccr/store.js';
import { compressAndStore } from '../../src/compression.js';
import { resolveConfig } from '../../src/config/resolve.js';
import type { ToinAdvice } from '../../src/engine/context/types.js';
import type { ChatMessage } from '../../src/engine/types.js';
import { createFakeCompress } from './fake-engine.js';
import {
  longText,
  type MockUpstream,
  replyJson,
  startMockUpstream,
  startSvc,
  type TestSvc,
} from './helpers.js';
import { MESSAGES_REPLY } from './sse-mocks.js';

const started: Array<TestSvc | MockUpstream> = [];
afterEach(async () => {
  for (const s of started.splice(0)) await s.close();
});

const messages = (): ChatMessage[] => [
  { role: 'user', content: longText('first question') },
  { role: 'assistant', content: longText('an answer') },
  { role: 'user', content: 'and now?' },
];

describe('compressAndStore on the same messages again', () => {
  it('gives the output computed for that array while its model, options and TOIN advice are the same', async () => {
    const calls: ChatMessage[][] = [];
    const stored: string[] = [];
    const ccr: CcrStore = {
      async put(hash) {
        stored.push(hash);
      },
      get: async () => undefined,
    };
    let advice: ToinAdvice = { shapes: {} };
    const c = {
      config: resolveConfig({ flags: {}, env: {} }),
      compress: createFakeCompress(calls),
      ccr,
      toin: () => advice,
    };
    const input = messages();
    const first = await compressAndStore(c, input, 'claude-sonnet-4-5');
    expect(first.ccrEntries.size).toBeGreaterThan(0);
    expect(await compressAndStore(c, input, 'claude-sonnet-4-5')).toBe(first);
    expect(calls).toHaveLength(1);
    // the originals are stored again on every call (their lifetime restarts)
    expect(stored).toEqual([...first.ccrEntries.keys(), ...first.ccrEntries.keys()]);
    // anything else that decides the output: computed again
    await compressAndStore(c, input, 'gpt-4o');
    await compressAndStore(c, input, 'gpt-4o', 4096);
    advice = { shapes: {} };
    await compressAndStore(c, input, 'gpt-4o', 4096);
    await compressAndStore(c, messages(), 'gpt-4o', 4096);
    expect(calls).toHaveLength(5);
  });
});

describe('a memoized turn through the proxy', () => {
  it('compresses a body sent again once, and forwards it the same way each time', async () => {
    const upstream = await startMockUpstream((_req, res) => replyJson(res, 200, MESSAGES_REPLY));
    started.push(upstream);
    const calls: ChatMessage[][] = [];
    const svc = await startSvc({
      flags: { 'messages-api-url': `${upstream.url}/v1`, cache: false },
      compress: createFakeCompress(calls),
    });
    started.push(svc);
    const history = Array.from({ length: 40 }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: longText(`turn ${i}`, 60),
    }));
    const body = JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      messages: history,
      tools: [{ name: 'run', description: 'runs a step', input_schema: { type: 'object' } }],
    });
    expect(body.length).toBeGreaterThan(64 * 1024);
    const forwarded: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${svc.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test' },
        body,
      });
      expect(res.status).toBe(200);
      await res.text();
      forwarded.push(upstream.requests.at(-1)!.body.toString('utf8'));
    }
    expect(calls).toHaveLength(1);
    expect(forwarded[0]).toContain('FAKE');
    expect(forwarded[1]).toBe(forwarded[0]);
    expect(forwarded[2]).toBe(forwarded[0]);
    const counts = svc.events.map((e) => [e.tokensBefore, e.tokensAfter, e.tokensSaved]);
    for (const c of counts) expect(c).toEqual(counts[0]);
    // the answers went through the retrieval loop (svc_retrieve offered): their usage read once, exactly
    expect(forwarded[0]).toContain('"name":"svc_retrieve"');
    for (const e of svc.events)
      expect(e.usage).toMatchObject({ input: 120, output: 9, cacheRead: 1000, cacheWrite: 50 });
  });
});
