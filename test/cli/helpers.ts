import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The built CLI entry (tests run after `npm run build`, see `pretest`). */
export const BIN = join(ROOT, 'bin', 'run.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunCliOptions {
  /** Text piped to stdin; when absent stdin is empty (closed). */
  stdin?: string;
  env?: Record<string, string>;
  cwd?: string;
}

/**
 * Runs `node bin/run.js ARGS` with a clean environment: HOME and
 * SERVICE_HOME point into `home`, so nothing touches the real ~/.svc.
 */
export function runCli(args: string[], home: string, options: RunCliOptions = {}): Promise<CliResult> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    SERVICE_HOME: join(home, '.svc'),
    NODE_ENV: 'test',
    ...options.env,
  };
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, cwd: options.cwd ?? ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

/** A temporary folder, removed by the returned cleanup. */
export function tempHome(prefix = 'svc-cli-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
