export { configFlags } from './flags.js';
export { type Config, OPTIONS, type OptionSpec } from './options.js';
export { optionsFor, resolveConfig } from './resolve.js';
