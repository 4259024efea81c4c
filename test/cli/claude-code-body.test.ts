import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runCompress } from '../../src/cli/compress-run.js';
import { resolveConfig } from '../../src/config/index.js';
import {
  type MockUpstream,
  replyJson,
  startMockUpstream,
  startSvc,
  type TestSvc,
} from '../server/helpers.js';
import { MESSAGES_REPLY } from '../server/sse-mocks.js';
import { tempHome } from './helpers.js';

/**
 * A body as Claude Code sends it to `/v1/messages`: a top-level system prompt,
 * tool_use / tool_result blocks, and a `role: "system"` reminder in the middle
 * of the conversation (issue 17: `svc compress` rejected these).
 */
function claudeCodeBody(): Record<string, unknown> {
  const testLog = Array.from({ length: 240 }, (_, i) =>
    i === 171
      ? ' FAIL  test/cart.test.ts > totals > applies the coupon once (expected 90, got 80)'
      : ` PASS  test/suite-${i % 12}.test.ts > case ${i} (${(i * 7) % 50} ms)`,
  ).join('\n');
  const orders = JSON.stringify(
    Array.from({ length: 150 }, (_, i) => ({
      id: `ord_${String(i).padStart(5, '0')}`,
      status: i % 9 === 4 ? 'failed' : 'paid',
      total_cents: 1000 + i * 37,
      customer: `cust_${i % 17}`,
    })),
    null,
    2,
  );
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 4096,
    system: [{ type: 'text', text: 'You are Claude Code, an agent for software engineering tasks.' }],
    tools: [{ name: 'Bash', description: 'Run a command', input_schema: { type: 'object' } }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Run the tests and fix the failing one.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Running the suite.' },
          { type: 'tool_use', id: 'toolu_01', name: 'Bash', input: { command: 'npm test' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: testLog }] },
      {
        role: 'system',
        content: '<system-reminder>The task list is empty. Use TodoWrite when it helps.</system-reminder>',
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me look at the orders the test uses.' },
          { type: 'tool_use', id: 'toolu_02', name: 'Bash', input: { command: 'cat fixtures/orders.json' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_02', content: orders },
          { type: 'text', text: 'Keep going.' },
        ],
      },
    ],
  };
}

const home = tempHome('svc-cc-');
afterAll(home.cleanup);
let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

async function cliCompress(inputFormat: 'auto' | 'messages' | 'chat') {
  const file = join(home.dir, 'claude-code.json');
  writeFileSync(file, JSON.stringify(claudeCodeBody()));
  const output = join(home.dir, `out-${inputFormat}.json`);
  let stderr = '';
  const code = await runCompress({
    files: [file],
    config: resolveConfig({ env: { SERVICE_HOME: join(home.dir, '.svc') } }),
    model: undefined,
    inputFormat,
    output,
    messagesOnly: false,
    pretty: false,
    summary: false,
    failUnder: undefined,
    record: false,
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stderr, result: code === 0 ? JSON.parse(readFileSync(output, 'utf8')) : undefined };
}

describe('svc compress takes a Claude Code body (mid-conversation system message)', {
  timeout: 60_000,
}, () => {
  it.each(['auto', 'messages'] as const)('--input-format %s compresses it', async (inputFormat) => {
    const { code, stderr, result } = await cliCompress(inputFormat);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(result.tokens_saved).toBeGreaterThan(0);
    expect(result.ccr_hashes.length).toBeGreaterThan(0);
    // the reminder stays where it was, unchanged
    expect(result.messages[3]).toEqual((claudeCodeBody().messages as unknown[])[3]);
  });

  it('prints the messages the proxy forwards for the same body', async () => {
    const cli = await cliCompress('auto');
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
    svc = await startSvc({ flags: { 'messages-api-url': `${upstream.url}/v1` } });
    const res = await fetch(`${svc.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(claudeCodeBody()),
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const forwarded = JSON.parse(upstream.requests[0]!.body.toString('utf8'));
    expect(forwarded.messages).not.toEqual(claudeCodeBody().messages);
    expect(cli.result.messages).toEqual(forwarded.messages);
  });
});
