/**
 * Small helpers shared by the benches: medians, child runs with peak RSS,
 * and a plain table printer (cli-table3).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Table from 'cli-table3';

/** The repository root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Median of numbers (mean of the middle two for an even count). */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Stops with a clear message when `dist/` is missing (`npm run bench` builds first). */
export function requireBuild() {
  if (!existsSync(join(ROOT, 'dist', 'src', 'engine', 'index.js'))) {
    console.error('bench: dist/ is missing; run `npm run build` (npm run bench does it for you)');
    process.exit(2);
  }
}

/**
 * Runs `node ARGS` and resolves with its wall time (ms), stdout, and, from GNU
 * time when present (else undefined), peak RSS (MB) and CPU time (user + sys, ms).
 */
export function runNode(args, { stdin, cwd = ROOT, env = process.env } = {}) {
  const gnuTime = existsSync('/usr/bin/time');
  const cmd = gnuTime ? '/usr/bin/time' : process.execPath;
  const argv = gnuTime ? ['-f', '__RSS_KB=%M __CPU=%U %S', process.execPath, ...args] : args;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd, argv, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - started;
      const rss = /__RSS_KB=(\d+) __CPU=([\d.]+) ([\d.]+)/.exec(stderr);
      resolve({
        code,
        ms,
        stdout,
        stderr: stderr.replace(/__RSS_KB=.*\n?/, ''),
        rssMb: rss ? Number(rss[1]) / 1024 : undefined,
        cpuMs: rss ? (Number(rss[2]) + Number(rss[3])) * 1000 : undefined,
      });
    });
    child.stdin.end(stdin ?? '');
  });
}

/** `load average 1.02 (2 cores)`: wall times on a busy machine mean little; the benches say so. */
export function loadNote() {
  return `load average ${os.loadavg()[0].toFixed(2)} (${os.cpus().length} cores)`;
}

/** Prints a table with a title. */
export function printTable(title, head, rows) {
  const table = new Table({ head, style: { head: [], border: [] } });
  for (const row of rows) table.push(row);
  console.log(`\n${title}\n${table.toString()}`);
}

/** `1234567` -> `1,234,567`. */
export const int = (n) => (n === undefined ? 'n/a' : Math.round(n).toLocaleString('en-US'));
/** Milliseconds with one decimal. */
export const ms = (n) => (n === undefined ? 'n/a' : `${n.toFixed(1)} ms`);
