import type { OptionSpec } from '../config/options.js';
import { optionsFor } from '../config/resolve.js';

/**
 * Start-up fast paths of `bin/run.js` (issue 19). oclif finds a command by
 * loading every command module (and what they import), about 150 ms before
 * `svc serve` starts its work and most of `svc --version`. Three invocations
 * skip it:
 * - `svc --version`: the same line oclif prints (`version-line.cts`, a module
 *   of its own: nothing else is loaded for it).
 * - `svc serve` and `svc compress` with plain flags (and files): parsed here
 *   with oclif's rules for the flags the commands declare (`--flag value`,
 *   `--flag=value`, `--[no-]flag` for booleans that default to on,
 *   repeatable lists, defaults), then the same code the oclif command runs
 *   (`serve-start.ts`, `compress-start.ts`: each the entry of its bundle).
 * Anything else (help, an unknown or repeated flag, a value oclif would
 * reject or read differently) returns undefined and goes through oclif,
 * which prints its usual help or error.
 */

type FlagValue = string | boolean | string[];

/** A flag as oclif declares it, reduced to what parsing needs. */
interface FlagDef {
  kind: 'boolean' | 'string' | 'list';
  /** Booleans: a `--no-` form exists. */
  allowNo?: boolean;
  /** Strings: the allowed values. */
  choices?: readonly string[];
  /** The value oclif gives when the flag is absent. */
  default?: FlagValue;
}

/** The flags `configFlags(command)` declares, as parsing needs them. */
function configFlagDefs(command: OptionSpec['commands'][number]): Map<string, FlagDef> {
  const defs = new Map<string, FlagDef>();
  for (const spec of optionsFor(command)) {
    if (!spec.flag) continue;
    if (spec.kind === 'boolean') defs.set(spec.flag, { kind: 'boolean', allowNo: spec.default === true });
    else if (spec.kind === 'list') defs.set(spec.flag, { kind: 'list' });
    else defs.set(spec.flag, { kind: 'string', ...(spec.choices ? { choices: spec.choices } : {}) });
  }
  return defs;
}

/**
 * `svc compress`'s own flags (commands/compress.ts declares them for oclif;
 * test/cli/fast-path.test.ts checks both agree). `-o` is left to oclif.
 */
const COMPRESS_FLAGS: ReadonlyArray<[string, FlagDef]> = [
  ['model', { kind: 'string' }],
  ['output', { kind: 'string' }],
  ['messages-only', { kind: 'boolean' }],
  ['summary', { kind: 'boolean' }],
  ['fail-under', { kind: 'string' }],
  ['input-format', { kind: 'string', choices: ['auto', 'chat', 'messages'], default: 'auto' }],
  ['pretty', { kind: 'boolean' }],
  ['record', { kind: 'boolean', allowNo: true, default: true }],
];

/**
 * Flags (and, with `positional`, arguments) as oclif would parse them, or
 * undefined when the arguments are anything but plain, valid flags.
 */
function parsePlain(
  argv: readonly string[],
  defs: ReadonlyMap<string, FlagDef>,
  positional: boolean,
): { flags: Record<string, FlagValue>; args: string[] } | undefined {
  const flags: Record<string, FlagValue> = {};
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('-') || arg === '-') {
      if (!positional) return undefined;
      args.push(arg);
      continue;
    }
    if (!arg.startsWith('--') || arg === '--') return undefined;
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    const def = defs.get(name);
    if (def?.kind === 'boolean') {
      if (eq !== -1 || name in flags) return undefined;
      flags[name] = true;
      continue;
    }
    if (!def && name.startsWith('no-')) {
      const negated = name.slice(3);
      if (!defs.get(negated)?.allowNo || eq !== -1 || negated in flags) return undefined;
      flags[negated] = false;
      continue;
    }
    if (!def) return undefined;
    const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
    if (value === undefined || value === '' || value.startsWith('-')) return undefined;
    if (def.kind === 'list') {
      flags[name] = [...((flags[name] as string[] | undefined) ?? []), value];
      continue;
    }
    if (name in flags) return undefined;
    if (def.choices && !def.choices.includes(value)) return undefined;
    flags[name] = value;
  }
  for (const [name, def] of defs)
    if (def.default !== undefined && !(name in flags)) flags[name] = def.default;
  return { flags, args };
}

/**
 * The flags of `svc serve ARGV` as oclif would parse them, or undefined when
 * the arguments are anything but plain, valid flags.
 */
export function parseServeFlags(argv: readonly string[]): Record<string, FlagValue> | undefined {
  return parsePlain(argv, configFlagDefs('serve'), false)?.flags;
}

/** `svc compress ARGV` as oclif would parse it (flags and files), or undefined (see `parseServeFlags`). */
export function parseCompressArgs(
  argv: readonly string[],
): { flags: Record<string, FlagValue>; args: string[] } | undefined {
  return parsePlain(argv, new Map([...COMPRESS_FLAGS, ...configFlagDefs('compress')]), true);
}
