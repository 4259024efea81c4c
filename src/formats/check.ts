/**
 * Shared pieces of the formats' shape checks (`ProviderFormat.checkShape`):
 * each check returns the first problem as `path: what is wrong`
 * (`messages[3].content[1].tool_use_id: expected a string`), or undefined.
 */

import { isObject } from './body.js';

/** How a value reads in a message: `a string`, `an array`, `nothing`. */
export function typeName(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Content parts: objects with a string `type`; text parts with a string `text`. */
export function checkParts(parts: unknown[], at: string): string | undefined {
  for (let j = 0; j < parts.length; j++) {
    const part = parts[j];
    if (!isObject(part)) return `${at}[${j}]: expected a content part object, got ${typeName(part)}`;
    if (typeof part.type !== 'string')
      return `${at}[${j}].type: expected a string, got ${typeName(part.type)}`;
    if (part.type === 'text' && typeof part.text !== 'string') {
      return `${at}[${j}].text: expected a string, got ${typeName(part.text)}`;
    }
  }
  return undefined;
}

/** Chat tool calls: `{id, function: {name, arguments}}` with string fields. */
export function checkToolCalls(calls: unknown, at: string): string | undefined {
  if (!Array.isArray(calls)) return `${at}: expected an array, got ${typeName(calls)}`;
  for (let j = 0; j < calls.length; j++) {
    const call = calls[j];
    const here = `${at}[${j}]`;
    if (!isObject(call)) return `${here}: expected a tool call object, got ${typeName(call)}`;
    if (typeof call.id !== 'string') return `${here}.id: expected a string, got ${typeName(call.id)}`;
    const fn = call.function;
    if (!isObject(fn)) return `${here}.function: expected an object, got ${typeName(fn)}`;
    if (typeof fn.name !== 'string')
      return `${here}.function.name: expected a string, got ${typeName(fn.name)}`;
    if (typeof fn.arguments !== 'string') {
      return `${here}.function.arguments: expected a JSON string, got ${typeName(fn.arguments)}`;
    }
  }
  return undefined;
}
