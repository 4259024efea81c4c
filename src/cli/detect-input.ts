import { SvcError } from '../errors.js';
import { DEFAULT_FORMAT, FORMATS, type FormatName, formatSignals } from '../formats/index.js';

/** The provider formats `svc compress` reads and writes (every one the proxy speaks). */
export type InputFormat = FormatName;

/** What `--input-format` accepts. */
export const INPUT_FORMATS = ['auto', ...(Object.keys(FORMATS) as FormatName[])] as const;
export type InputFormatChoice = 'auto' | FormatName;

/** A parsed, validated input of `svc compress`. */
export interface DetectedInput {
  format: InputFormat;
  /** The request body when the input was an object; undefined for a bare array. */
  body: Record<string, unknown> | undefined;
  /** The messages, validated for `format`. */
  messages: unknown[];
  /** `model` of the body, when it has one. */
  model: string | undefined;
  /** Why the format was chosen (for `--summary` and errors). */
  reason: string;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Works out what an input is: a request body `{model, messages}` or a bare
 * messages array, in the format whose signals it carries
 * (`formatSignals`: content blocks with `tool_use` / `tool_result` or a
 * top-level `system` for the messages format). Plain text conversations read
 * the same in every format and are taken as the default (chat). The shape
 * check is the format's own (`checkShape`).
 * Throws SVC_BAD_INPUT naming the place (`convo.json: messages[3].role: ...`).
 */
export function detectInput(
  value: unknown,
  where: string,
  choice: InputFormatChoice = 'auto',
): DetectedInput {
  let body: Record<string, unknown> | undefined;
  let messages: unknown[];
  const expected = 'expected a request body {"model", "messages": [...]} or an array of messages';
  if (Array.isArray(value)) messages = value;
  else if (isObject(value)) {
    body = value;
    if (!('messages' in value)) {
      const keys = Object.keys(value).slice(0, 6).join(', ');
      throw new SvcError(
        'SVC_BAD_INPUT',
        `${where}: ${expected}; got an object with keys: ${keys || '(none)'}`,
      );
    }
    if (!Array.isArray(value.messages)) {
      throw new SvcError(
        'SVC_BAD_INPUT',
        `${where}: messages: expected an array, got ${typeName(value.messages)}`,
      );
    }
    messages = value.messages;
    if (value.model !== undefined && typeof value.model !== 'string') {
      throw new SvcError('SVC_BAD_INPUT', `${where}: model: expected a string, got ${typeName(value.model)}`);
    }
  } else throw new SvcError('SVC_BAD_INPUT', `${where}: ${expected}; got ${typeName(value)}`);
  const prefix = body ? 'messages' : '';
  if (messages.length === 0)
    throw new SvcError('SVC_BAD_INPUT', `${where}: ${prefix || 'input'}: no messages, nothing to compress`);

  let format: InputFormat;
  let reason: string;
  if (choice !== 'auto') {
    format = choice;
    reason = `--input-format ${choice}`;
  } else {
    const signals = formatSignals(messages, body, prefix);
    if (signals.length > 1) {
      const named = signals.map((s) => `${s.format.name} format (${s.where})`).join(' and ');
      throw new SvcError('SVC_BAD_INPUT', `${where}: mixes ${named}; choose one with --input-format`);
    }
    const found = signals[0];
    format = found ? found.format.name : DEFAULT_FORMAT.name;
    reason = found ? `${found.format.name} format: ${found.where}` : 'plain text messages';
  }
  const problem = FORMATS[format].checkShape(messages, body, prefix);
  if (problem) throw new SvcError('SVC_BAD_INPUT', `${where}: ${problem}`);
  const model = typeof body?.model === 'string' && body.model !== '' ? body.model : undefined;
  return { format, body, messages, model, reason };
}
