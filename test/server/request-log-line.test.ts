import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, type LogLevel } from '../../src/log.js';
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

describe('the per-request debug line', () => {
  it('says whether a level is printed', () => {
    const logger = createLogger({ level: 'info', write: () => undefined });
    const levels: LogLevel[] = ['error', 'warn', 'info', 'debug'];
    expect(levels.map((l) => logger.enabled?.(l))).toEqual([true, true, true, false]);
  });

  it.each(['debug', 'info'] as const)(
    'is printed for each request at level %s only if debug',
    async (level) => {
      upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
      const lines: string[] = [];
      svc = await startSvc({
        compress: createFakeCompress(),
        flags: { 'messages-api-url': `${upstream.url}/v1` },
        logger: createLogger({ level, write: (l) => lines.push(l) }),
      });
      const res = await fetch(`${svc.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test' },
        body: JSON.stringify({
          model: 'claude-sonnet-4-5',
          max_tokens: 9,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      });
      expect(res.status).toBe(200);
      await res.text();
      await until(() => svc!.events.length === 1);
      const line = lines.find((l) => l.includes('/v1/messages 200 optimize'));
      if (level === 'debug') expect(line).toContain('"latency_ms"');
      else expect(line).toBeUndefined();
    },
  );
});
