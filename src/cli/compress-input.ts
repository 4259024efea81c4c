import type { CcrStore } from '../ccr/store.js';
import { type CompressFn, compressAndStore } from '../compression.js';
import type { Config } from '../config/options.js';
import type { EngineOutput } from '../engine/types.js';
import { isSvcError, SvcError } from '../errors.js';
import { FORMATS, parseRequest, spliceRequest, UnspliceableError } from '../formats/index.js';
import { detectInput, type InputFormat, type InputFormatChoice } from './detect-input.js';
import { parseJsonInput } from './parse-json.js';

export type { CompressFn };

/** Model used when neither the input nor `--model` names one. */
export const DEFAULT_MODEL = 'gpt-4o';

export interface CompressInputOptions {
  /** Name of the input in messages (`convo.json`, `stdin`). */
  where: string;
  inputFormat: InputFormatChoice;
  /** `--model`: used when the input names no model. */
  model: string | undefined;
  config: Config;
  /** Opens the CCR store; called only when the engine removed something. */
  ccr: () => CcrStore;
  compress: CompressFn;
  /** Prints a warning line. */
  warn: (message: string) => void;
}

/** The compression result of spec section 2, `messages` in the input's own format. */
export interface CompressOutput {
  messages: unknown[];
  tokens_before: number;
  tokens_after: number;
  tokens_saved: number;
  compression_ratio: number;
  transforms_applied: string[];
  ccr_hashes: string[];
}

export interface CompressedInput {
  format: InputFormat;
  model: string;
  output: CompressOutput;
  /** Set when the CCR write failed and the input is returned uncompressed. */
  fellBack: boolean;
}

const reasonOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The messages of a spliced body text (at the format's messages path). */
function messagesOf(text: string, path: readonly (string | number)[]): unknown[] {
  const list = path.reduce<unknown>(
    (v, key) => (v as Record<string | number, unknown> | undefined)?.[key],
    JSON.parse(text),
  );
  return Array.isArray(list) ? list : [];
}

/**
 * One input of `svc compress`, start to end, through the same format code
 * and engine call as the proxy: read the body in its format (`formats/`),
 * compress and store the removed originals (`compressAndStore`), splice the
 * output back into the body. The printed messages are the ones the proxy
 * would forward for the same body. When the CCR write fails (or the output
 * does not fit the body) the input's own messages are returned uncompressed
 * with a warning (principle 3: never emit a marker that cannot be redeemed).
 * Throws SVC_BAD_INPUT for bad input and SVC_COMPRESSION_FAILED when the
 * engine throws.
 */
export async function compressInput(text: string, options: CompressInputOptions): Promise<CompressedInput> {
  const { where } = options;
  const input = detectInput(parseJsonInput(text, where), where, options.inputFormat);
  const model = input.model ?? options.model ?? DEFAULT_MODEL;
  const format = FORMATS[input.format];
  const body = input.body ?? { messages: input.messages };
  let parsed: ReturnType<typeof parseRequest>;
  try {
    parsed = parseRequest(format, body);
  } catch (err) {
    if (isSvcError(err)) throw new SvcError('SVC_BAD_INPUT', `${where}: ${err.message}`, { cause: err });
    throw err;
  }
  const uncompressed = (tokens: number): CompressedInput => ({
    format: input.format,
    model,
    fellBack: true,
    output: {
      messages: input.messages,
      tokens_before: tokens,
      tokens_after: tokens,
      tokens_saved: 0,
      compression_ratio: 1,
      transforms_applied: [],
      ccr_hashes: [],
    },
  });

  let engineOutput: EngineOutput;
  try {
    engineOutput = await compressAndStore(
      { config: options.config, compress: options.compress, ccr: options.ccr },
      parsed.messages,
      model,
      parsed.maxTokens,
    );
  } catch (err) {
    if (isSvcError(err) && err.code === 'SVC_STORE_UNAVAILABLE') {
      options.warn(
        `${where}: ${reasonOf(err.cause)}; printing the input uncompressed so no marker points at a lost original`,
      );
      return uncompressed(Number(err.details?.tokensBefore ?? 0));
    }
    if (!isSvcError(err) || err.code !== 'SVC_COMPRESSION_FAILED') throw err;
    throw new SvcError('SVC_COMPRESSION_FAILED', `${where}: compression failed: ${reasonOf(err.cause)}`, {
      cause: err.cause,
    });
  }
  const { result } = engineOutput;
  let spliced: string | undefined;
  try {
    spliced = spliceRequest(format, JSON.stringify(body), parsed, engineOutput);
  } catch (err) {
    if (!(err instanceof UnspliceableError)) throw err;
    // As the proxy does: the output does not fit the body, so the original goes.
    options.warn(
      `${where}: the compressed messages do not fit the input (${err.message}); printing it uncompressed`,
    );
    return uncompressed(result.tokens_before);
  }
  return {
    format: input.format,
    model,
    fellBack: false,
    output: {
      messages: spliced === undefined ? input.messages : messagesOf(spliced, format.messagesPath),
      tokens_before: result.tokens_before,
      tokens_after: result.tokens_after,
      tokens_saved: result.tokens_saved,
      compression_ratio: result.compression_ratio,
      transforms_applied: result.transforms_applied,
      ccr_hashes: result.ccr_hashes,
    },
  };
}
