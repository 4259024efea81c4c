import { render } from 'ink';
import type { StatsSnapshot } from '../stats/snapshot.js';
import { StatsView } from './stats-view.js';

/** Renders the live stats view on the terminal until the user quits (`q`, Esc or Ctrl-C). */
export async function runStatsView(options: {
  load: () => Promise<StatsSnapshot>;
  intervalMs: number;
}): Promise<void> {
  const app = render(<StatsView load={options.load} intervalMs={options.intervalMs} />);
  await app.waitUntilExit();
}
