import { join } from 'node:path';
import { render } from 'ink-testing-library';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { publishFinished } from '../../src/server/finished-event.js';
import { recordSavings } from '../../src/stats/savings-file.js';
import { loadStatsSnapshot } from '../../src/stats/snapshot.js';
import { StatsView } from '../../src/ui/stats-view.js';
import { finishedEvent, startServer, type TestServer, tempHome } from './helpers.js';

let home: string;
let cleanup: () => Promise<void>;
let srv: TestServer | undefined;
let unmount: (() => void) | undefined;
beforeEach(async () => {
  ({ home, cleanup } = await tempHome());
});
afterEach(async () => {
  unmount?.();
  unmount = undefined;
  await srv?.close();
  srv = undefined;
  await cleanup();
});

async function waitForFrame(
  lastFrame: () => string | undefined,
  test: (frame: string) => boolean,
): Promise<string> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const frame = lastFrame() ?? '';
    if (test(frame)) return frame;
    if (Date.now() > deadline) throw new Error(`frame never matched; last frame:\n${frame}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('svc stats live view (ink)', () => {
  it('shows a live server, and refreshes', async () => {
    srv = await startServer(home);
    const { ctx } = srv.server;
    // The events below are synthetic: the wired cache's own counters would say 0 hits.
    ctx.cacheStats = () => ({ entries: 0, hits: 1, misses: 0 });
    ctx.budgetStatus = () => ({
      enabled: true,
      daily: {
        limit: 5,
        spend: 1.25,
        reserved: 0,
        remaining: 3.75,
        resets_at: '2026-03-05T00:00:00.000Z',
        exceeded: false,
      },
    });
    publishFinished(ctx, finishedEvent({ tokensBefore: 1000, tokensSaved: 600 }));
    publishFinished(
      ctx,
      finishedEvent({
        mode: 'cached',
        cached: true,
        tokensSaved: 0,
        tokensBefore: 1000,
        upstreamStatus: undefined,
        usage: undefined,
      }),
    );
    publishFinished(
      ctx,
      finishedEvent({
        status: 429,
        rateLimited: true,
        tokensSaved: 0,
        tokensBefore: 0,
        upstreamStatus: undefined,
        usage: undefined,
      }),
    );
    const savingsPath = ctx.config.savingsPath;
    const load = () => loadStatsSnapshot({ url: srv!.url, savingsPath });
    const view = render(<StatsView load={load} intervalMs={50} />);
    unmount = view.unmount;
    const frame = await waitForFrame(view.lastFrame, (f) => f.includes('Requests'));
    expect(frame).toContain(`svc stats: ${srv.url}`);
    expect(frame).toMatch(/Requests\s+total 3\s+cached 1\s+rate-limited 1\s+failed 0/);
    expect(frame).toMatch(
      /Tokens\s+in \(whole requests\) 2,000\s+saved 600 \(30\.0% of in\)\s+sent [\d,]+\s+out 50/,
    );
    expect(frame).toMatch(/Cost\s+billed \$0\.0015\s+saved x input price \$0\.0015\s+cache-aware \$0\.0000/);
    expect(frame).toMatch(/Cache\s+entries 0\s+hits 1/);
    expect(frame).toMatch(/Budget\s+daily \$1\.250 of \$5\.000 \(25%\)/);
    expect(frame).toMatch(/Lifetime\s+tokens saved 600\s+saved \$0\.0015/);
    expect(frame).toContain('refreshing every');

    publishFinished(ctx, finishedEvent({ tokensBefore: 1000, tokensSaved: 400 }));
    const next = await waitForFrame(view.lastFrame, (f) => f.includes('total 4'));
    expect(next).toMatch(/saved 1,000 \(33\.3% of in\)/);
  });

  it('with the server down shows the lifetime totals from the savings file and says so', async () => {
    const savingsPath = join(home, 'proxy_savings.json');
    await recordSavings({ savingsPath, tokensSaved: 4000, model: 'gpt-4o' });
    await recordSavings({ savingsPath, tokensSaved: 250, model: 'gpt-4o' });
    // A port nothing listens on: start a server, note its URL, stop it.
    const gone = await startServer(home, { env: { SERVICE_SAVINGS_PATH: join(home, 'other.json') } });
    await gone.close();
    const load = () => loadStatsSnapshot({ url: gone.url, savingsPath });
    const view = render(<StatsView load={load} intervalMs={50} />);
    unmount = view.unmount;
    const frame = await waitForFrame(view.lastFrame, (f) => f.includes('Lifetime'));
    expect(frame).toContain(`no server answering at ${gone.url} (ECONNREFUSED)`);
    expect(frame).toContain(`lifetime totals from the savings file ${savingsPath}`);
    expect(frame).toMatch(/Lifetime\s+tokens saved 4,250\s+saved \$0\.0106\s+2 recorded savings/);
    expect(frame).not.toContain('Requests');
  });
});
