import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { generateSession } from '../../fixtures/generate.js';
import { toMessagesBody } from '../../fixtures/lib/conversation.js';
import { heapGrowingGiven } from '../../src/server/idle-gc.js';
import { type MockUpstream, postMessages, replyJson, spawnServe, startMockUpstream } from './helpers.js';
import { MESSAGES_REPLY } from './sse-mocks.js';

let upstream: MockUpstream | undefined;
const children: ChildProcess[] = [];
const homes: string[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
  await upstream?.close();
  upstream = undefined;
});

/** A real `svc serve` started with `nodeFlags` and `--trace-gc`. */
async function traced(nodeFlags: string[]) {
  const svc = await spawnServe(
    upstream!.url,
    ['--no-cache', '--no-rate-limit'],
    [...nodeFlags, '--trace-gc'],
  );
  children.push(svc.child);
  homes.push(svc.home);
  return svc;
}

describe('V8 full collections spaced under a steady load (issue 19)', () => {
  it("svc serve lets the old generation grow to 3x what survived: at least a third fewer full collections per memoized turn than node's own pacing", async () => {
    upstream = await startMockUpstream((_req, res) => replyJson(res, 200, MESSAGES_REPLY));
    const body = JSON.stringify(toMessagesBody(generateSession(91_000, 7)));
    // node's own value (0: V8 picks the factor from how fast it collects, so
    // from the machine's load) is left as it is: the control. The two servers
    // take turns, so both see the same load.
    const control = await traced(['--heap-growing-percent=0']);
    const paced = await traced([]);
    const turn = async () => {
      for (const svc of [control, paced]) expect((await postMessages(svc.url, body)).status).toBe(200);
    };
    for (let i = 0; i < 300; i++) await turn();
    const from = { control: control.stdout().length, paced: paced.stdout().length };
    for (let i = 0; i < 800; i++) await turn();
    const fulls = (svc: typeof control, offset: number) =>
      (
        svc
          .stdout()
          .slice(offset)
          .match(/Mark-Compact/g) ?? []
      ).length;
    const inControl = fulls(control, from.control);
    const inPaced = fulls(paced, from.paced);
    // measured in 800 turns: 15-25 against 5-7 taking turns, idle or with both cores
    // busy; 13 against 7 in a CI run that measured them one after the other
    expect(inControl).toBeGreaterThanOrEqual(10);
    expect(inPaced * 3).toBeLessThanOrEqual(inControl * 2);
  }, 120_000);

  it('leaves a value given to node alone', () => {
    expect(heapGrowingGiven(['--heap-growing-percent=50'])).toBe(true);
    expect(heapGrowingGiven(['--max-old-space-size=512', '--heap_growing_percent=10'])).toBe(true);
    expect(heapGrowingGiven(['--expose-gc', '--max-old-space-size=512'])).toBe(false);
  });
});
