import { callScopedMap, inCall } from '../call-scope.js';

/**
 * JSON texts of objects and arrays written during one engine call, by object:
 * the compact rendering, the item selection and the subtree digests each
 * need the JSON of many of the same parts of an output (an item, a record),
 * and parsed values are never modified (compressors build new objects), so
 * each is written once. Emptied when the engine call ends; bounded by
 * entries and characters.
 */
const textsInCall = callScopedMap<object, string>();
const TEXTS_IN_CALL_MAX = 100_000;
const CHARS_IN_CALL_MAX = 2 * 1024 * 1024;
let charsInCall = 0;
/** Shorter texts are not kept: writing one again costs less than keeping it. */
const KEPT_FROM = 128;

/** `JSON.stringify(v)` of an object or array, written once per engine call. */
export function jsonText(v: object): string {
  if (!inCall()) return JSON.stringify(v);
  let text = textsInCall.get(v);
  if (text !== undefined) return text;
  text = JSON.stringify(v);
  // the map is emptied when a call ends, and its count with it
  if (textsInCall.size === 0) charsInCall = 0;
  if (
    text.length >= KEPT_FROM &&
    textsInCall.size < TEXTS_IN_CALL_MAX &&
    charsInCall + text.length <= CHARS_IN_CALL_MAX
  ) {
    textsInCall.set(v, text);
    charsInCall += text.length;
  }
  return text;
}
