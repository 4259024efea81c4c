/**
 * The quality gate: scores the built engine on ../shared/eval/dev with the
 * shared scorer and fails when overall mean evidence recall drops below
 * `MIN_RECALL`, or token savings (overall or of any source) drop more than
 * `MAX_SAVINGS_DROP` points below the figures committed in
 * bench/eval-baseline.json. `npm test` builds dist/ first (pretest).
 *
 * Refresh the committed figures after a deliberate change:
 *   UPDATE_EVAL_BASELINE=1 npx vitest run test/quality/eval-gate.test.ts
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
const EVAL = resolve(ROOT, '..', 'shared', 'eval');
const CASES = join(EVAL, 'dev');
const BASELINE = join(ROOT, 'bench', 'eval-baseline.json');
const MIN_RECALL = 0.99;
const MAX_SAVINGS_DROP = 2;
/** The scorer's own per-case limit is 60 s; the whole run must stay well under 10 minutes. */
const GATE_TIMEOUT_MS = 12 * 60_000;

interface SourceSummary {
  cases: number;
  savings: number;
  recall: number;
}

interface Baseline {
  note: string;
  cmd: string;
  sources: Record<string, SourceSummary>;
}

/** One row of the scorer's table: `| source | cases | before | after | saved % | med ratio | recall | ...`. */
function parseTable(
  stdout: string,
): Record<string, SourceSummary & { broken: number; userChanged: number; errors: number }> {
  const out: Record<string, SourceSummary & { broken: number; userChanged: number; errors: number }> = {};
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('| ') || line.startsWith('| source')) continue;
    const c = line
      .split('|')
      .slice(1, -1)
      .map((s) => s.trim());
    if (c.length < 13 || !/^\d+$/.test(c[1]!)) continue;
    out[c[0]!] = {
      cases: Number(c[1]),
      savings: Number(c[4]),
      recall: Number(c[6]),
      broken: Number(c[9]),
      userChanged: Number(c[10]),
      errors: Number(c[11]),
    };
  }
  return out;
}

function runScorer(): Promise<string> {
  const parallel = String(Math.max(2, Math.min(4, availableParallelism())));
  const cmd = `${JSON.stringify(process.execPath)} bench/eval-cmd.js`;
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      [join(EVAL, 'score.mjs'), '--cases', CASES, '--cmd', cmd, '--parallel', parallel, '--timeout', '120'],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', fail);
    child.on('close', (code) =>
      code === 0 ? done(stdout) : fail(new Error(`score.mjs exited ${code}: ${stderr.slice(-2000)}`)),
    );
  });
}

describe.skipIf(!existsSync(join(EVAL, 'score.mjs')) || !existsSync(CASES))(
  'quality gate on ../shared/eval/dev',
  () => {
    it(
      `keeps overall recall >= ${MIN_RECALL} and savings within ${MAX_SAVINGS_DROP} points of bench/eval-baseline.json`,
      async () => {
        // `npm test`'s pretest installs them (scripts/test-tools.js): the tests themselves may reach loopback only.
        expect(
          existsSync(join(EVAL, 'node_modules')),
          'run npm test (its pretest installs ../shared/eval)',
        ).toBe(true);
        const stdout = await runScorer();
        console.log(stdout);
        const got = parseTable(stdout);
        const overall = got.overall;
        expect(overall, stdout).toBeDefined();
        if (process.env.UPDATE_EVAL_BASELINE) {
          const sources: Record<string, SourceSummary> = {};
          for (const [name, s] of Object.entries(got))
            sources[name] = { cases: s.cases, savings: s.savings, recall: s.recall };
          const baseline: Baseline = {
            note: 'figures of test/quality/eval-gate.test.ts (saved % and mean recall per source); refresh with UPDATE_EVAL_BASELINE=1',
            cmd: 'node bench/eval-cmd.js',
            sources,
          };
          writeFileSync(BASELINE, `${JSON.stringify(baseline, null, 2)}\n`);
        }
        const baseline = JSON.parse(readFileSync(BASELINE, 'utf8')) as Baseline;
        const failures: string[] = [];
        if (overall!.recall < MIN_RECALL) failures.push(`overall recall ${overall!.recall} < ${MIN_RECALL}`);
        for (const [name, s] of Object.entries(got)) {
          if (s.errors > 0) failures.push(`${name}: ${s.errors} errors`);
          if (s.broken > 0) failures.push(`${name}: ${s.broken} broken tool pairs`);
          if (s.userChanged > 0) failures.push(`${name}: ${s.userChanged} changed last user messages`);
          const committed = baseline.sources[name];
          if (committed && s.savings < committed.savings - MAX_SAVINGS_DROP)
            failures.push(
              `${name}: saved ${s.savings}% < committed ${committed.savings}% - ${MAX_SAVINGS_DROP}`,
            );
        }
        expect(failures, stdout).toEqual([]);
      },
      GATE_TIMEOUT_MS,
    );
  },
);
