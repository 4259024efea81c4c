import type { Config } from '../config/options.js';
import type { EngineOptions } from '../engine/index.js';
import { SvcError } from '../errors.js';

/** Model used when neither the input nor `--model` names one. */
export const DEFAULT_MODEL = 'gpt-4o';

/**
 * Engine options of `svc compress` minus the model, from the resolved config
 * (context-manager and ML flags). The ML fields are passed through for the
 * engine's optional ML transform; the engine ignores what it does not know.
 */
export type CliEngineOptions = Omit<EngineOptions, 'model'> & {
  mlcompress: boolean;
  mlcompressDevice: Config['mlcompressDevice'];
  mlcompressRate: number;
  mlcompressModel: string;
  mlcompressTimeout: number;
};

/** Parses `recency=1,similarity=0.5` into weights; SVC_BAD_CONFIG on a malformed pair. */
export function parseScoreWeights(text: string): Record<string, number> {
  const weights: Record<string, number> = {};
  for (const pair of text.split(',')) {
    if (pair.trim() === '') continue;
    const [name, value, extra] = pair.split('=').map((s) => s.trim());
    const n = Number(value);
    if (!name || value === undefined || value === '' || extra !== undefined || !Number.isFinite(n) || n < 0) {
      throw new SvcError(
        'SVC_BAD_CONFIG',
        `--score-weights: "${pair}" is not NAME=NUMBER (e.g. recency=1,errors=2)`,
      );
    }
    weights[name] = n;
  }
  return weights;
}

/** Builds the engine options from the config. */
export function engineOptionsFromConfig(config: Config): CliEngineOptions {
  const options: CliEngineOptions = {
    intelligentContext: config.intelligentContext,
    intelligentScoring: config.intelligentScoring,
    compressFirst: config.compressFirst,
    lossless: config.lossless,
    protectTurns: config.protectTurns,
    mlcompress: config.mlcompress,
    mlcompressDevice: config.mlcompressDevice,
    mlcompressRate: config.mlcompressRate,
    mlcompressModel: config.mlcompressModel,
    mlcompressTimeout: config.mlcompressTimeout,
  };
  if (config.contextLimit !== undefined) options.contextLimit = config.contextLimit;
  if (config.scoreWeights !== undefined) options.scoreWeights = parseScoreWeights(config.scoreWeights);
  return options;
}
