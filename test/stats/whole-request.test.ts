import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tokenizerFor } from '../../src/engine/tokens.js';
import { FORMATS, parseRequest } from '../../src/formats/index.js';
import { getJson, startServer, type TestServer, tempHome } from './helpers.js';

// Issue 18, items 1 and 2: a three-turn session through the proxy, the mock upstream
// reporting cache reads and writes. /stats counts the whole requests (system, tools,
// messages) as sent and as forwarded, and prices each usage tier at its own rate.

let home: string;
let cleanup: () => Promise<void>;
let srv: TestServer | undefined;
let upstream: Server | undefined;
beforeEach(async () => {
  ({ home, cleanup } = await tempHome());
});
afterEach(async () => {
  await srv?.close();
  srv = undefined;
  await new Promise<void>((r) => (upstream ? upstream.close(() => r()) : r()));
  upstream = undefined;
  await cleanup();
});

// What the mock upstream reports, turn by turn (Anthropic usage fields).
const USAGE = [
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

async function mockUpstream(forwarded: string[]): Promise<string> {
  upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      forwarded.push(Buffer.concat(chunks).toString('utf8'));
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
  await new Promise<void>((r) => upstream!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(upstream!.address() as AddressInfo).port}/v1`;
}

const TOOLS = Array.from({ length: 12 }, (_, i) => ({
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

function turnBodies(): object[] {
  const turns: object[] = [];
  const messages: object[] = [{ role: 'user', content: 'Check the build.' }];
  turns.push({
    model: 'claude-sonnet-4-5',
    max_tokens: 100,
    system: SYSTEM,
    tools: TOOLS,
    messages: [...messages],
  });
  messages.push(
    {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'tool_1', input: { path: '.' } }],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: RESULT }] },
  );
  turns.push({
    model: 'claude-sonnet-4-5',
    max_tokens: 100,
    system: SYSTEM,
    tools: TOOLS,
    messages: [...messages],
  });
  messages.push(
    { role: 'assistant', content: [{ type: 'text', text: 'Some files have type errors.' }] },
    { role: 'user', content: 'Which ones?' },
  );
  turns.push({
    model: 'claude-sonnet-4-5',
    max_tokens: 100,
    system: SYSTEM,
    tools: TOOLS,
    messages: [...messages],
  });
  return turns;
}

/** Tokens of a whole messages-format body: its messages (system included) and its tool definitions. */
function wholeTokens(text: string): number {
  const body = JSON.parse(text) as { model: string; tools?: unknown[] };
  const tokenizer = tokenizerFor(body.model);
  const parsed = parseRequest(FORMATS.messages, body);
  return (
    tokenizer.countMessages(parsed.messages) +
    (body.tools ? tokenizer.countText(JSON.stringify(body.tools)) : 0)
  );
}

describe('a three-turn session through the proxy', () => {
  it('counts whole requests as sent and as forwarded, and prices every cache tier (numbers written out)', async () => {
    const forwarded: string[] = [];
    const base = await mockUpstream(forwarded);
    srv = await startServer(home, { flags: { 'messages-api-url': base, cache: false } });
    const sent = turnBodies().map((b) => JSON.stringify(b));
    for (const text of sent) {
      const res = await fetch(`${srv.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
        body: text,
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    // biome-ignore lint/suspicious/noExplicitAny: reads response JSON by path
    let stats: Record<string, any> = {};
    for (let i = 0; i < 50; i++) {
      stats = (await getJson(`${srv.url}/stats`)).body;
      if (stats.requests.total >= 3) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(stats.requests.total).toBe(3);
    expect(forwarded).toHaveLength(3);

    const input = sent.map(wholeTokens);
    const out = forwarded.map(wholeTokens);
    // The tools alone are a large part of each request: they are counted.
    expect(input[0]!).toBeGreaterThan(tokenizerFor('claude-sonnet-4-5').countText(JSON.stringify(TOOLS)));
    // Something was compressed (turns 2 and 3 carry the large tool result).
    expect(out[1]!).toBeLessThan(input[1]!);
    expect(stats.tokens.input).toBe(input[0]! + input[1]! + input[2]!);
    expect(stats.tokens.sent).toBe(out[0]! + out[1]! + out[2]!);
    // svc's own svc_retrieve definition is forwarded too (from the first request): input - sent = saved - added.
    expect(stats.tokens.added).toBeGreaterThan(0);
    expect(stats.tokens.input - stats.tokens.sent).toBe(stats.tokens.saved - stats.tokens.added);
    expect(stats.tokens.savings_percent).toBe(
      Math.round((stats.tokens.saved / stats.tokens.input) * 10_000) / 100,
    );
    expect(stats.tokens.cache_read).toBe(0 + 5000 + 5800);
    expect(stats.tokens.cache_write).toBe(5000 + 800 + 400);
    expect(stats.tokens.output).toBe(100 + 80 + 50);

    // claude-sonnet-4-5: input $3, 5-minute write $3.75, 1-hour write $6, cache read $0.30, output $15 per million.
    // turn 1: 1200x3 + 5000x3.75 + 100x15             = 3600 + 18750 + 1500         = 23850
    // turn 2: 300x3 + 5000x0.30 + 800x6 (1h) + 80x15  = 900 + 1500 + 4800 + 1200    = 8400
    // turn 3: 200x3 + 5800x0.30 + 400x3.75 + 50x15    = 600 + 1740 + 1500 + 750     = 4590
    expect(stats.cost.total_cost_usd).toBeCloseTo((23850 + 8400 + 4590) / 1e6, 9);
    expect(stats.cost.estimated_requests).toBe(0);
    expect(stats.cost.unpriced_requests).toBe(0);

    // /health says the same.
    // biome-ignore lint/suspicious/noExplicitAny: reads response JSON by path
    const health = (await getJson(`${srv.url}/health`)).body as Record<string, any>;
    expect(health.stats).toEqual({
      total_requests: 3,
      tokens_saved: stats.tokens.saved,
      savings_percent: stats.tokens.savings_percent,
    });
  });
});
