import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { IDLE_GC_MS } from '../../src/server/idle-gc.js';
import { type MockUpstream, replyJson, startMockUpstream, startSvc, type TestSvc, until } from './helpers.js';
import { MESSAGES_REPLY } from './sse-mocks.js';

/** glibc Linux, where svc can call `malloc_trim` (koffi is installed with the dev dependencies). */
const glibc =
  process.platform === 'linux' &&
  Boolean(
    (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header
      ?.glibcVersionRuntime,
  );

const built = pathToFileURL(join(import.meta.dirname, '../../dist/src/server/release-memory.js')).href;

/**
 * A process that leaves glibc holding ~100 MB of free pages: one large block
 * freed raises glibc's mmap threshold, 200 half-MB buffers then come from its
 * heap, small blocks allocated after them pin the heap's top, and the buffers
 * are collected. Prints its RSS (MB) after the collection and after
 * `releaseFreedMemory`, and whether it ran.
 */
const CHILD = `
const { releaseFreedMemory } = await import(${JSON.stringify(built)});
const rss = () => process.memoryUsage.rss() / 1e6;
let big = Buffer.allocUnsafeSlow(8 << 20); big.fill(1); big = undefined; gc(); gc();
let bufs = [];
for (let i = 0; i < 200; i++) bufs.push(Buffer.allocUnsafeSlow(512 << 10).fill(i));
const pins = Array.from({ length: 50 }, () => Buffer.allocUnsafeSlow(2048).fill(1));
bufs = undefined; gc(); gc();
const freed = rss();
const ran = releaseFreedMemory();
console.log(JSON.stringify({ freed, after: rss(), ran, pins: pins.length }));
`;

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

describe('freed memory goes back to the system at idle (issue 19)', () => {
  it.runIf(glibc)('releaseFreedMemory returns the free pages glibc kept', () => {
    const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', CHILD], {
      encoding: 'utf8',
    });
    const { freed, after, ran } = JSON.parse(out) as { freed: number; after: number; ran: boolean };
    expect(ran).toBe(true);
    expect(freed - after).toBeGreaterThan(60); // of the ~100 MB of buffers, collected but kept by glibc
  });

  it('the server collects and releases once it has been idle, and logs what it gave back', async () => {
    const lines: string[] = [];
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
    svc = await startSvc({
      flags: { 'messages-api-url': `${upstream.url}/v1` },
      logger: createLogger({ level: 'debug', write: (line) => lines.push(line) }),
    });
    const body = JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: `Summarize:\n${'a line of a long tool output\n'.repeat(20_000)}` }],
    });
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${svc.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test' },
        body,
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const idle = () => lines.find((l) => l.includes('idle: garbage collected'));
    await until(() => idle() !== undefined, IDLE_GC_MS + 5000);
    const fields = JSON.parse(idle()!.slice(idle()!.indexOf('{'))) as Record<string, unknown>;
    expect(fields.freed_memory_returned).toBe(glibc);
    expect(fields.rss_mb_before).toBeTypeOf('number');
    expect(fields.rss_mb_after).toBeTypeOf('number');
  }, 20_000);
});
