import type { Config } from '../config/options.js';
import type { Logger } from '../log.js';
import { mlEnabledLine, mlPreflight } from './detect.js';
import type { MlCompressor } from './ml-compressor.js';

export type { MlCompressor, MlPassOutput } from './ml-compressor.js';

/**
 * Prints the ML start-up line (spec 1.9) and, when `--mlcompress` is on and
 * the runtime and model are there, starts the worker. Returns undefined when
 * ML compression is off or unavailable; svc then runs without it. The
 * optional packages are imported only here, only when enabled.
 */
export async function loadMlCompressor(config: Config, logger: Logger): Promise<MlCompressor | undefined> {
  const pre = mlPreflight({
    enabled: config.mlcompress,
    device: config.mlcompressDevice,
    rate: config.mlcompressRate,
    modelDir: config.mlcompressModel,
  });
  if (pre) logger[pre.level](pre.text);
  if (!config.mlcompress || pre) return undefined;
  try {
    const { startMlCompressor } = await import('./ml-compressor.js');
    const ml = await startMlCompressor({
      modelDir: config.mlcompressModel,
      device: config.mlcompressDevice,
      rate: config.mlcompressRate,
      timeoutMs: config.mlcompressTimeout,
    });
    if (ml.fellBack.length > 0 && config.mlcompressDevice !== 'auto') {
      logger.warn(`ML compression: device ${config.mlcompressDevice} unavailable, using ${ml.provider} (${ml.fellBack.join('; ')})`);
    }
    const line = mlEnabledLine(ml.provider, config.mlcompressRate);
    logger[line.level](`${line.text}, model loaded in ${Math.round(ml.loadMs)} ms`);
    return ml;
  } catch (err) {
    logger.warn(`ML compression: the model in ${config.mlcompressModel} could not be loaded; running without it (${String((err as Error).message ?? err)})`);
    return undefined;
  }
}
