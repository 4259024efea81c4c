import { readFileSync } from 'node:fs';
import type { OptionSpec } from '../config/options.js';
import { optionsFor } from '../config/resolve.js';

/**
 * Start-up fast paths of `bin/run.js` (issue 19). oclif finds a command by
 * loading every command module (and what they import), about 150 ms before
 * `svc serve` starts its work and most of `svc --version`. Two invocations
 * skip it:
 * - `svc --version`: the same line oclif prints.
 * - `svc serve` with plain flags: parsed here with oclif's rules for the
 *   flags `configFlags('serve')` declares (`--flag value`, `--flag=value`,
 *   `--[no-]flag` for booleans that default to on, repeatable lists), then
 *   the same `runServe` the oclif command runs.
 * Anything else (help, an unknown or repeated flag, a value oclif would
 * reject or read differently) returns undefined and goes through oclif,
 * which prints its usual help or error.
 */

/** `svc-proxy/0.1.0 linux-x64 node-v20.18.1`, as oclif's `--version` prints it. */
export function versionLine(packageJsonUrl: URL): string {
  const pkg = JSON.parse(readFileSync(packageJsonUrl, 'utf8')) as { name: string; version: string };
  return `${pkg.name}/${pkg.version} ${process.platform}-${process.arch} node-${process.version}`;
}

type FlagValue = string | boolean | string[];

/**
 * The flags of `svc serve ARGV` as oclif would parse them, or undefined when
 * the arguments are anything but plain, valid flags.
 */
export function parseServeFlags(argv: readonly string[]): Record<string, FlagValue> | undefined {
  const specs = new Map<string, OptionSpec>();
  for (const spec of optionsFor('serve')) if (spec.flag) specs.set(spec.flag, spec);
  const flags: Record<string, FlagValue> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--') || arg === '--') return undefined;
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    let spec = specs.get(name);
    if (spec?.kind === 'boolean') {
      if (eq !== -1 || name in flags) return undefined;
      flags[name] = true;
      continue;
    }
    if (!spec && name.startsWith('no-')) {
      const negated = name.slice(3);
      spec = specs.get(negated);
      // only booleans that default to on have a --no- form (configFlags: allowNo)
      if (spec?.kind !== 'boolean' || spec.default !== true || eq !== -1) return undefined;
      if (negated in flags) return undefined;
      flags[negated] = false;
      continue;
    }
    if (!spec) return undefined;
    const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
    if (value === undefined || value === '' || value.startsWith('-')) return undefined;
    if (spec.kind === 'list') {
      flags[name] = [...((flags[name] as string[] | undefined) ?? []), value];
      continue;
    }
    if (name in flags) return undefined;
    if (spec.choices && !spec.choices.includes(value)) return undefined;
    flags[name] = value;
  }
  return flags;
}

/**
 * Runs `svc serve` without oclif when the arguments allow it; false when
 * they do not (the caller then runs oclif). Errors print the way oclif's
 * `this.error` prints them, with the same exit codes.
 */
export async function serveFastPath(argv: readonly string[]): Promise<boolean> {
  const flags = parseServeFlags(argv);
  if (!flags) return false;
  const { runServe } = await import('./serve-run.js');
  await runServe(flags, (message, exit) => {
    process.stderr.write(` ›   Error: ${message}\n`);
    process.exit(exit);
  });
  return true;
}
