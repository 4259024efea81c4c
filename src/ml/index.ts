import type { Config } from '../config/options.js';
import type { EngineDeps, EngineOptions } from '../engine/index.js';
import type { ChatMessage, EngineOutput } from '../engine/types.js';
import type { Logger } from '../log.js';
import { mlPreflight } from './detect.js';
import type { MlCompressor } from './ml-compressor.js';

export type { MlCompressor, MlPassOutput } from './ml-compressor.js';

/**
 * When `--mlcompress` is on and the runtime and model are there, starts the
 * worker and loads the model. Returns undefined when ML compression is off or
 * unavailable; svc then runs without it. The start-up lines (spec 1.9) are
 * printed by the caller (`startupLines`, or `svc compress` from
 * `mlPreflight`); this logs only a load failure or a device fallback. The
 * optional packages are imported only here, only when enabled.
 */
export async function loadMlCompressor(config: Config, logger: Logger): Promise<MlCompressor | undefined> {
  const pre = mlPreflight({
    enabled: config.mlcompress,
    device: config.mlcompressDevice,
    rate: config.mlcompressRate,
    modelDir: config.mlcompressModel,
  });
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
      logger.warn(
        `ML compression: device ${config.mlcompressDevice} unavailable, using ${ml.provider} (${ml.fellBack.join('; ')})`,
      );
    }
    logger.debug(`ML compression: model loaded in ${Math.round(ml.loadMs)} ms`);
    return ml;
  } catch (err) {
    logger.warn(
      `ML compression: the model in ${config.mlcompressModel} could not be loaded; running without it (${String((err as Error).message ?? err)})`,
    );
    return undefined;
  }
}

/**
 * Puts the ML pass in front of an engine call: the ML transform runs first,
 * then the engine's compressors and the context manager on its output.
 * Counts stay honest: `tokens_before` is counted on the original messages.
 */
export function withMlPass<F extends CompressLike>(compress: F, ml: MlCompressor): CompressLike {
  return async (messages, options, deps) => {
    if (options.lossless) return compress(messages, options, deps); // --lossless: nothing lossy
    const pass = await ml.compress(messages);
    const out = await compress(pass.messages, options, deps);
    if (pass.changed.size === 0) return out;
    const { tokenizerFor } = await import('../engine/tokens.js');
    const tokenizer = deps?.tokenizer ?? tokenizerFor(options.model);
    const before = tokenizer.countMessages(messages);
    const after = out.result.tokens_after;
    const ccrEntries = new Map([...pass.ccrEntries, ...out.ccrEntries]);
    return {
      ...out,
      result: {
        ...out.result,
        tokens_before: before,
        tokens_saved: Math.max(0, before - after),
        compression_ratio: before > 0 ? after / before : 1,
        transforms_applied: [...pass.transforms, ...out.result.transforms_applied],
        ccr_hashes: [...new Set([...pass.ccrEntries.keys(), ...out.result.ccr_hashes])],
      },
      ccrEntries,
      changed: new Set([...pass.changed, ...out.changed]),
    };
  };
}

/** The shape of an engine call (`compressMessages`, or the server's injectable `CompressFn`). */
export type CompressLike = (
  messages: ChatMessage[],
  options: EngineOptions,
  deps?: EngineDeps,
) => EngineOutput | Promise<EngineOutput>;
