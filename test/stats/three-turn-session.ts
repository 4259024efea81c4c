import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tokenizerFor } from '../../src/engine/tokens.js';
import { FORMATS, parseRequest } from '../../src/formats/index.js';

/**
 * A three-turn Claude Code style session (system prompt, 12 tools, a large
 * tool result on turn 2) and a mock Anthropic upstream that reports cache
 * reads and writes for each turn: the fixture of the whole-request and
 * cache-aware accounting tests (issue 18), whose numbers are written out
 * against `USAGE`.
 */

/** What the mock upstream reports, turn by turn (Anthropic usage fields). */
export const USAGE = [
  {
    input_tokens: 1200,
    output_tokens: 100,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 5000,
    cache_creation: { ephemeral_5m_input_tokens: 5000, ephemeral_1h_input_tokens: 0 },
  },
  {
    input_tokens: 300,
    output_tokens: 80,
    cache_read_input_tokens: 5000,
    cache_creation_input_tokens: 800,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 800 },
  },
  { input_tokens: 200, output_tokens: 50, cache_read_input_tokens: 5800, cache_creation_input_tokens: 400 },
];

/**
 * Starts the mock upstream on loopback: each request body is pushed to
 * `forwarded` and answered with the next turn's `USAGE`. Returns its `/v1`
 * base URL and the server (the caller closes it).
 */
export async function startUsageMock(forwarded: Buffer[]): Promise<{ base: string; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      forwarded.push(Buffer.concat(chunks));
      const usage = USAGE[forwarded.length - 1];
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `msg_${forwarded.length}`,
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5-20250929',
          content: [{ type: 'text', text: 'ok' }],
          stop_reason: 'end_turn',
          usage,
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server };
}

export const TOOLS = Array.from({ length: 12 }, (_, i) => ({
  name: `tool_${i}`,
  description: `Runs step ${i} of the build and reports what it found, in detail, for the agent to read.`,
  input_schema: {
    type: 'object',
    properties: { path: { type: 'string', description: 'a file path' }, depth: { type: 'integer' } },
    required: ['path'],
  },
}));
const SYSTEM = 'You are a careful coding agent. Read the tool results before answering. '.repeat(20);
const RESULT = JSON.stringify(
  Array.from({ length: 150 }, (_, i) => ({
    id: i,
    file: `src/module_${i % 7}/file_${i}.ts`,
    status: i % 11 === 0 ? 'error' : 'ok',
    message: i % 11 === 0 ? `type error at line ${i}` : 'no problems found',
  })),
);

/** The three request bodies as the client sends them; each turn's messages extend the previous turn's. */
export function turnBodies(): string[] {
  const body = (messages: object[]) =>
    JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 100, system: SYSTEM, tools: TOOLS, messages });
  const messages: object[] = [{ role: 'user', content: 'Check the build.' }];
  const turns = [body(messages)];
  messages.push(
    {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'tool_1', input: { path: '.' } }],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: RESULT }] },
  );
  turns.push(body(messages));
  messages.push(
    { role: 'assistant', content: [{ type: 'text', text: 'Some files have type errors.' }] },
    { role: 'user', content: 'Which ones?' },
  );
  turns.push(body(messages));
  return turns;
}

/** Tokens of a whole messages-format body as svc counts them: its messages (system included) and tools. */
export function wholeTokens(text: string): number {
  const body = JSON.parse(text) as { model: string; tools?: unknown[] };
  const tokenizer = tokenizerFor(body.model);
  const parsed = parseRequest(FORMATS.messages, body);
  return (
    tokenizer.countMessages(parsed.messages) +
    (body.tools ? tokenizer.countText(JSON.stringify(body.tools)) : 0)
  );
}
