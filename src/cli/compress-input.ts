import { type CcrStore, putAll } from '../ccr/store.js';
import type { ChatMessage, EngineDeps, EngineOptions, EngineOutput } from '../engine/index.js';
import { SvcError } from '../errors.js';
import { detectInput, type InputFormat, type InputFormatChoice } from './detect-input.js';
import { type CliEngineOptions, DEFAULT_MODEL } from './engine-options.js';
import { chatToMessagesFormat, type MessagesFormatMessage, messagesFormatToChat } from './messages-input.js';
import { parseJsonInput } from './parse-json.js';

/** The engine entry point, injectable for tests. */
export type CompressFn = (
  messages: ChatMessage[],
  options: EngineOptions,
  deps?: EngineDeps,
) => EngineOutput | Promise<EngineOutput>;

export interface CompressInputOptions {
  /** Name of the input in messages (`convo.json`, `stdin`). */
  where: string;
  inputFormat: InputFormatChoice;
  /** `--model`: used when the input names no model. */
  model: string | undefined;
  engine: CliEngineOptions;
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

/**
 * One input of `svc compress`, start to end: parse, detect, convert to chat,
 * compress, write the removed originals to the CCR store, convert back.
 * When the CCR write fails the input's own messages are returned uncompressed
 * with a warning (principle 3: never emit a marker that cannot be redeemed).
 * Throws SVC_BAD_INPUT for bad input and SVC_COMPRESSION_FAILED when the
 * engine throws.
 */
export async function compressInput(text: string, options: CompressInputOptions): Promise<CompressedInput> {
  const { where } = options;
  const input = detectInput(parseJsonInput(text, where), where, options.inputFormat);
  const model = input.model ?? options.model ?? DEFAULT_MODEL;
  const conversion =
    input.format === 'messages'
      ? messagesFormatToChat(input.messages as MessagesFormatMessage[], input.body?.system)
      : undefined;
  const chat = conversion ? conversion.chat : (input.messages as ChatMessage[]);

  let engineOutput: EngineOutput;
  try {
    engineOutput = await options.compress(chat, { ...options.engine, model });
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new SvcError('SVC_COMPRESSION_FAILED', `${where}: compression failed: ${reason}`, { cause });
  }
  const { result } = engineOutput;

  if (engineOutput.ccrEntries.size > 0) {
    try {
      await putAll(options.ccr(), engineOutput.ccrEntries);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      options.warn(
        `${where}: ${reason}; printing the input uncompressed so no marker points at a lost original`,
      );
      return {
        format: input.format,
        model,
        fellBack: true,
        output: {
          messages: input.messages,
          tokens_before: result.tokens_before,
          tokens_after: result.tokens_before,
          tokens_saved: 0,
          compression_ratio: 1,
          transforms_applied: [],
          ccr_hashes: [],
        },
      };
    }
  }

  const messages = conversion
    ? chatToMessagesFormat(conversion, {
        messages: result.messages,
        messageOrigin: engineOutput.messageOrigin,
        changed: engineOutput.changed,
      })
    : result.messages;
  return {
    format: input.format,
    model,
    fellBack: false,
    output: {
      messages,
      tokens_before: result.tokens_before,
      tokens_after: result.tokens_after,
      tokens_saved: result.tokens_saved,
      compression_ratio: result.compression_ratio,
      transforms_applied: result.transforms_applied,
      ccr_hashes: result.ccr_hashes,
    },
  };
}
