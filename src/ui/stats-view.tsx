import { Box, Text, useApp, useInput } from 'ink';
import { useEffect, useRef, useState } from 'react';
import type { StatsSnapshot } from '../stats/snapshot.js';
import { statsLines } from './stats-rows.js';

export interface StatsViewProps {
  /** Fetches one snapshot (the server's `/stats`, or the savings file when it is down). */
  load: () => Promise<StatsSnapshot>;
  /** Refresh period in ms (1000 for `svc stats`). */
  intervalMs: number;
}

/**
 * The live `svc stats` view: one row per block (requests, tokens, cost,
 * cache, budget, lifetime), refreshed every `intervalMs`; `q` or Esc quits.
 * Falls back to the savings file's lifetime totals while no server answers,
 * and says so.
 */
export function StatsView({ load, intervalMs }: StatsViewProps) {
  const { exit } = useApp();
  const [snapshot, setSnapshot] = useState<StatsSnapshot | undefined>();
  const [error, setError] = useState<string | undefined>();
  const busy = useRef(false);

  useInput((input, key) => {
    if (input === 'q' || key.escape) exit();
  });

  useEffect(() => {
    let alive = true;
    const tick = async () => {
      if (busy.current) return;
      busy.current = true;
      try {
        const next = await load();
        if (alive) {
          setSnapshot(next);
          setError(undefined);
        }
      } catch (err) {
        if (alive) setError(String(err));
      } finally {
        busy.current = false;
      }
    };
    void tick();
    const timer = setInterval(() => void tick(), intervalMs);
    return () => {
      alive = false;
      clearInterval(timer);
    };
  }, [load, intervalMs]);

  if (!snapshot) return <Text dimColor>{error ? `svc stats: ${error}` : 'svc stats: connecting...'}</Text>;
  const lines = statsLines(snapshot);
  const width = Math.max(...lines.rows.map((r) => r.label.length));
  const down = snapshot.source === 'file';
  return (
    <Box flexDirection="column">
      <Text bold color={down ? 'yellow' : 'green'}>
        {lines.title}
      </Text>
      <Text dimColor>{lines.note}</Text>
      {lines.rows.map((row) => (
        <Box key={row.label} gap={2}>
          <Text bold>{row.label.padEnd(width)}</Text>
          {row.items.map(([name, value]) => (
            <Text key={`${row.label}-${name}-${value}`} color={row.alert ? 'red' : undefined}>
              {name ? `${name} ` : ''}
              <Text bold>{value}</Text>
            </Text>
          ))}
        </Box>
      ))}
      <Text dimColor>{`refreshing every ${Math.round(intervalMs / 100) / 10}s; q to quit`}</Text>
    </Box>
  );
}
