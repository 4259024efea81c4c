import { contentText } from '../tokens.js';
import type { ChatMessage } from '../types.js';

/** Everything a message says, for scoring: its content plus tool call names and arguments. */
export function messageText(message: ChatMessage): string {
  let text = contentText(message.content);
  for (const call of message.tool_calls ?? []) {
    text += `\n${call.function?.name ?? ''} ${call.function?.arguments ?? ''}`;
  }
  return text;
}

const STOPWORDS = new Set(
  'a an and are as at be but by can do does for from has have how i if in into is it its me my no not of on or our please so than that the their them then there these this to was we were what when where which who why will with you your'.split(
    ' ',
  ),
);

/**
 * Terms for lexical similarity: lowercased words and identifiers, with
 * camelCase and snake_case identifiers also split into their parts, so
 * `parseConfigFile` matches a question about "config files".
 */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.match(/[A-Za-z0-9_]+/g) ?? []) {
    if (raw.length > 64) continue;
    const whole = raw.toLowerCase();
    if (whole.length >= 2 && !STOPWORDS.has(whole)) out.push(whole);
    const parts = raw.split(/_|(?<=[a-z0-9])(?=[A-Z])/).filter((p) => p.length >= 2);
    if (parts.length > 1) {
      for (const part of parts) {
        const lower = part.toLowerCase();
        if (!STOPWORDS.has(lower)) out.push(lower);
      }
    }
  }
  return out;
}

/** Crude English stemming so "files" matches "file" and "failing" matches "fail". */
export function stem(term: string): string {
  if (term.length <= 4 || /\d/.test(term)) return term;
  return term.replace(/(ies|ing|ed|es|s)$/, (m) => (m === 'ies' ? 'y' : ''));
}
