import { Flags } from '@oclif/core';
import type { CommandName, OptionSpec } from './options.js';
import { optionsFor } from './resolve.js';

/** A default as `--help` shows it: `8787`, `on`, `~/.svc/ccr`, nothing when there is none. */
export function defaultText(spec: OptionSpec): string | undefined {
  const d = spec.default;
  if (d === undefined || (Array.isArray(d) && d.length === 0)) return undefined;
  if (typeof d === 'boolean') return d ? 'on' : 'off';
  return String(d).replace('<home>', '$SERVICE_HOME');
}

/**
 * The flag's summary with its default and environment variable in front, the
 * way oclif prints its own: `[default: 8787, env: SERVICE_PORT] bind port`.
 */
export function flagSummary(spec: OptionSpec): string {
  const meta: string[] = [];
  const d = defaultText(spec);
  // A boolean that defaults to on is negated (--no-cache): its "default: on" says nothing.
  if (d !== undefined && !(spec.kind === 'boolean' && spec.default === true)) meta.push(`default: ${d}`);
  if (spec.env) meta.push(`env: ${spec.env}`);
  const text = spec.description.replace(/`/g, '');
  return meta.length > 0 ? `[${meta.join(', ')}] ${text}` : text;
}

/**
 * oclif flags for a command, built from the option table. oclif's own
 * `default` and `env` flag options are left out on purpose: `resolveConfig`
 * applies env and defaults (a flag that is not given stays undefined, so the
 * environment can win over the default, and an error names the variable, not
 * the flag). `--help` shows both through the summary instead.
 */
export function configFlags(command: CommandName) {
  // biome-ignore lint/suspicious/noExplicitAny: oclif's flag map is heterogeneous
  const flags: Record<string, any> = {};
  for (const spec of optionsFor(command)) {
    if (!spec.flag) continue;
    const summary = flagSummary(spec);
    switch (spec.kind) {
      case 'boolean':
        flags[spec.flag] = Flags.boolean({ summary, allowNo: spec.default === true });
        break;
      case 'list':
        flags[spec.flag] = Flags.string({ summary, multiple: true });
        break;
      default:
        flags[spec.flag] = Flags.string({ summary, ...(spec.choices ? { options: [...spec.choices] } : {}) });
    }
  }
  return flags;
}

/**
 * The environment variables without a flag that apply to a command (SERVICE_HOME,
 * SERVICE_SAVINGS_PATH, ...), as lines for the command's `--help` description.
 */
export function envOnlyHelp(command: CommandName): string {
  const lines = optionsFor(command)
    .filter((s) => !s.flag && s.env)
    .map((s) => {
      const d = defaultText(s);
      return `  ${s.env}  ${s.description.replace(/`/g, '')}${d === undefined ? '' : ` (default: ${d})`}`;
    });
  return lines.length > 0 ? `Environment (no flag):\n${lines.join('\n')}` : '';
}
