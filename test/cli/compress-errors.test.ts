import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, tempHome } from './helpers.js';

const home = tempHome();
afterAll(home.cleanup);
const file = (name: string, text: string) => {
  const path = join(home.dir, name);
  writeFileSync(path, text);
  return path;
};
const ok = { role: 'user', content: 'hello' };

interface BadCase {
  name: string;
  /** Arguments after `compress`; a function gets files written first. */
  args: () => string[];
  stdin?: string;
  /** The one stderr line must match. */
  error: RegExp;
}

const CASES: BadCase[] = [
  {
    name: 'not JSON, in a file',
    args: () => [file('broken.json', '{"model": "gpt-4o", "messages": [}')],
    error: /broken\.json: not valid JSON at line 1, column 34: expected a value$/,
  },
  {
    name: 'not JSON, on a later line',
    args: () => [
      file('broken-lines.json', '{\n  "messages": [\n    {"role": "user" "content": "x"}\n  ]\n}'),
    ],
    error: /broken-lines\.json: not valid JSON at line 3, column 21: expected ',' or a closing bracket$/,
  },
  {
    name: 'unterminated JSON on stdin',
    args: () => [],
    stdin: '{"messages": [',
    error: /^svc compress: error: stdin: not valid JSON at line 1, column \d+/,
  },
  {
    name: 'content after the JSON value',
    args: () => [],
    stdin: `{"messages": [${JSON.stringify(ok)}]} {"second": 1}`,
    error: /stdin: not valid JSON at line 1, column 51: unexpected content after the JSON value/,
  },
  {
    name: 'an empty file',
    args: () => [file('empty.json', '')],
    error: /empty\.json: empty input: expected JSON/,
  },
  { name: 'only whitespace on stdin', args: () => [], stdin: ' \n\t\n', error: /stdin: empty input/ },
  {
    name: 'a number instead of a conversation',
    args: () => [],
    stdin: '42',
    error:
      /stdin: expected a request body \{"model", "messages": \[\.\.\.\]\} or an array of messages; got a number/,
  },
  {
    name: 'an object without messages',
    args: () => [],
    stdin: '{"model":"gpt-4o","prompt":"hi"}',
    error: /stdin: .*got an object with keys: model, prompt/,
  },
  {
    name: 'messages not an array',
    args: () => [],
    stdin: '{"messages":{"role":"user"}}',
    error: /stdin: messages: expected an array, got an object/,
  },
  {
    name: 'no messages',
    args: () => [],
    stdin: '{"model":"gpt-4o","messages":[]}',
    error: /stdin: messages: no messages, nothing to compress/,
  },
  {
    name: 'a message without a role',
    args: () => [],
    stdin: JSON.stringify({ messages: [ok, { content: 'x' }] }),
    error: /stdin: messages\[1\]\.role: expected a string, got nothing/,
  },
  {
    name: 'a message that is not an object',
    args: () => [],
    stdin: JSON.stringify([ok, 'hello']),
    error: /stdin: \[1\]: expected a message object, got a string/,
  },
  {
    name: 'content of the wrong type',
    args: () => [],
    stdin: JSON.stringify({ messages: [{ role: 'user', content: 7 }] }),
    error: /messages\[0\]\.content: expected a string or an array of parts, got a number/,
  },
  {
    name: 'tool arguments that are not a string',
    args: () => [],
    stdin: JSON.stringify({
      messages: [
        ok,
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: {} } }],
        },
      ],
    }),
    error: /messages\[1\]\.tool_calls\[0\]\.function\.arguments: expected a JSON string, got an object/,
  },
  {
    name: 'a tool message without tool_call_id',
    args: () => [],
    stdin: JSON.stringify({ messages: [ok, { role: 'tool', content: 'out' }] }),
    error: /messages\[1\]\.tool_call_id: expected a string on a tool message/,
  },
  {
    name: 'a tool_result without tool_use_id',
    args: () => [],
    stdin: JSON.stringify({
      system: 's',
      messages: [ok, { role: 'user', content: [{ type: 'tool_result', content: 'x' }] }],
    }),
    error: /messages\[1\]\.content\[0\]\.tool_use_id: expected a string, got nothing/,
  },
  {
    name: 'chat and messages format mixed',
    args: () => [],
    stdin: JSON.stringify({
      messages: [
        { role: 'system', content: 's' },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }] },
      ],
    }),
    error:
      /stdin: mixes chat format \(messages\[0\]\.role "system"\) and messages format \(messages\[1\]\.content\[0\] \(tool_result\)\); choose one with --input-format/,
  },
  {
    name: 'a model that is not a string',
    args: () => [],
    stdin: JSON.stringify({ model: 4, messages: [ok] }),
    error: /stdin: model: expected a string, got a number/,
  },
  {
    name: 'a missing file',
    args: () => [join(home.dir, 'nope.json')],
    error: /nope\.json: no such file or folder$/,
  },
  {
    name: 'a folder without JSON files',
    args: () => {
      const dir = join(home.dir, 'empty-folder');
      mkdirSync(dir, { recursive: true });
      return [dir];
    },
    error: /empty-folder: no \.json files in this folder/,
  },
  {
    name: '--output into a missing folder',
    args: () => ['--output', join(home.dir, 'missing', 'out.json')],
    stdin: JSON.stringify([ok]),
    error: /--output .*out\.json: its folder does not exist/,
  },
  {
    name: '--fail-under that is not a number',
    args: () => ['--fail-under', 'lots'],
    stdin: JSON.stringify([ok]),
    error: /--fail-under: expected a percentage such as 30, got "lots"/,
  },
  {
    name: 'a config flag out of range',
    args: () => ['--mlcompress-rate', '2'],
    stdin: JSON.stringify([ok]),
    error: /--mlcompress-rate: 2 is above the maximum 1/,
  },
  {
    name: 'malformed --score-weights',
    args: () => ['--score-weights', 'recency'],
    stdin: JSON.stringify([ok]),
    error: /--score-weights: "recency" is not NAME=NUMBER/,
  },
];

describe('svc compress: bad input gets one line, exit 2, no stack trace', { timeout: 60_000 }, () => {
  it.each(CASES)('$name', async ({ args, stdin, error }) => {
    const run = await runCli(['compress', ...args()], home.dir, stdin === undefined ? {} : { stdin });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^svc compress: error: /);
    expect(lines[0]).toMatch(error);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
