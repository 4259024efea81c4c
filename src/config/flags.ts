import { Flags } from '@oclif/core';
import type { CommandName } from './options.js';
import { optionsFor } from './resolve.js';

/**
 * oclif flags for a command, built from the option table. Defaults are left
 * out on purpose: `resolveConfig` applies env and defaults, so a flag that is
 * not given stays undefined and the environment can win over the default.
 */
export function configFlags(command: CommandName) {
  // biome-ignore lint/suspicious/noExplicitAny: oclif's flag map is heterogeneous
  const flags: Record<string, any> = {};
  for (const spec of optionsFor(command)) {
    if (!spec.flag) continue;
    const summary = spec.description.replace(/`/g, '');
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
