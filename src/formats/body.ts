import { SvcError } from '../errors.js';

/** True for a plain JSON object. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Throws SVC_BAD_INPUT naming the field a provider body has wrong. */
export function badBody(field: string, message: string): never {
  throw new SvcError('SVC_BAD_INPUT', `${field} ${message}`, { details: { field } });
}

/** A non-negative integer field, else undefined. */
export function intField(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/** Parses tool-call arguments (a JSON text); a model's malformed JSON becomes an empty input. */
export function parseToolArguments(json: string): Record<string, unknown> {
  try {
    const v = JSON.parse(json || '{}') as unknown;
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
