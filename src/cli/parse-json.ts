import { createRequire } from 'node:module';
import type * as Jsonc from 'jsonc-parser';
import { SvcError } from '../errors.js';

/**
 * jsonc-parser, loaded on the first input that is not JSON (it only locates
 * the error): `svc compress` of valid input does not pay its load.
 */
let jsonc: typeof Jsonc | undefined;
function jsoncParser(): typeof Jsonc {
  jsonc ??= createRequire(import.meta.url)('jsonc-parser') as typeof Jsonc;
  return jsonc;
}

const PROBLEMS: Record<string, string> = {
  InvalidSymbol: 'unexpected character',
  InvalidNumberFormat: 'malformed number',
  PropertyNameExpected: 'expected a property name in double quotes',
  ValueExpected: 'expected a value',
  ColonExpected: "expected ':'",
  CommaExpected: "expected ',' or a closing bracket",
  CloseBraceExpected: "expected '}'",
  CloseBracketExpected: "expected ']'",
  EndOfFileExpected: 'unexpected content after the JSON value',
  InvalidCommentToken: 'comments are not allowed in JSON',
  UnexpectedEndOfComment: 'comments are not allowed in JSON',
  UnexpectedEndOfString: 'unterminated string',
  UnexpectedEndOfNumber: 'malformed number',
  InvalidUnicode: 'invalid \\u escape',
  InvalidEscapeCharacter: 'invalid escape character',
  InvalidCharacter: 'control character in a string',
};

/** 1-based line and column of a character offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * Finds where and why `text` is not JSON. Only called after `JSON.parse`
 * failed: V8's messages do not always carry a position.
 */
function locateJsonError(text: string): { offset: number; problem: string } {
  const parser = jsoncParser();
  const errors: Jsonc.ParseError[] = [];
  parser.parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  if (!first) return { offset: 0, problem: 'not valid JSON' };
  const name = parser.printParseErrorCode(first.error);
  return { offset: first.offset, problem: PROBLEMS[name] ?? name };
}

/**
 * Parses JSON read from `where` (a file name or `stdin`). A leading BOM is
 * ignored. Throws SVC_BAD_INPUT with one line naming the place and problem:
 * `convo.json: not valid JSON at line 3, column 7: expected a value`.
 */
export function parseJsonInput(text: string, where: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim() === '') throw new SvcError('SVC_BAD_INPUT', `${where}: empty input: expected JSON`);
  try {
    return JSON.parse(body);
  } catch (cause) {
    const { offset, problem } = locateJsonError(body);
    const { line, column } = lineColumn(body, offset);
    throw new SvcError(
      'SVC_BAD_INPUT',
      `${where}: not valid JSON at line ${line}, column ${column}: ${problem}`,
      {
        cause,
        details: { line, column, offset },
      },
    );
  }
}
