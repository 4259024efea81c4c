import { afterEach, describe, expect, it } from 'vitest';
import { messagesBody } from '../formats/bodies.js';
import { createFakeCompress } from './fake-engine.js';
import { type MockUpstream, replyJson, startMockUpstream, startSvc, type TestSvc, until } from './helpers.js';
import { MESSAGES_REPLY } from './sse-mocks.js';

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

describe('request.finished: priced once, then frozen', () => {
  it('every observer sees the cost already set and cannot write to the event', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
    svc = await startSvc({
      compress: createFakeCompress(),
      flags: { 'messages-api-url': `${upstream.url}/v1` },
    });
    const res = await fetch(`${svc.url}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify(messagesBody()),
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    // emitted once the after-response work (token counts for the stats, accounting) is done
    const events = svc.events;
    await until(() => events.length > 0);
    const event = events.at(-1)!;
    expect(Object.isFrozen(event)).toBe(true);
    expect(Object.isFrozen(event.usage)).toBe(true);
    // claude-sonnet-4-5 is in the shipped pricing table: the usage the upstream reported is priced
    expect(event.costUsd).toBeGreaterThan(0);
    expect(() => {
      (event as { costUsd: number | undefined }).costUsd = 0;
    }).toThrow(TypeError);
  });
});
