import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFakeCompress } from '../server/fake-engine.js';
import {
  type Browser,
  launchBrowser,
  openDashboard,
  pick,
  shownFields,
  startServer,
  type TestServer,
  waitForPolls,
} from './helpers.js';

let browser: Browser;
let svc: TestServer;
let upstream: Server;
let upstreamUrl: string;

/** A provider on loopback: answers with usage; a request whose last message says "fail" gets a 500. */
function startUpstream(): Promise<void> {
  upstream = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const fail = body.includes('please fail');
    const reply = req.url?.endsWith('/messages')
      ? {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content: [{ type: 'text', text: 'ok' }],
          stop_reason: 'end_turn',
          usage: { input_tokens: 120, output_tokens: 9 },
        }
      : {
          id: 'c1',
          object: 'chat.completion',
          model: 'gpt-4o',
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 110, completion_tokens: 7, total_tokens: 117 },
        };
    const text = JSON.stringify(
      fail ? { error: { message: 'upstream broke', type: 'server_error' } } : reply,
    );
    res.writeHead(fail ? 500 : 200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  });
  return new Promise((resolve) =>
    upstream.listen(0, '127.0.0.1', () => {
      upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
      resolve();
    }),
  );
}

/** A long tool output the (fake) engine compresses. */
const toolOutput = (label: string) =>
  Array.from({ length: 60 }, (_, i) => `${label} line ${i}: GET /api/items?page=${i} 200 12ms`).join('\n');

async function chat(last: string) {
  const body = {
    model: 'gpt-4o',
    messages: [
      { role: 'user', content: 'show me the access log' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_log', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: toolOutput(last) },
      { role: 'user', content: last },
    ],
  };
  return fetch(`${svc.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
    body: JSON.stringify(body),
  });
}

async function messages(last: string) {
  const body = {
    model: 'claude-sonnet-4-5',
    max_tokens: 100,
    messages: [
      { role: 'user', content: [{ type: 'text', text: toolOutput('build') }] },
      { role: 'assistant', content: 'noted' },
      { role: 'user', content: last },
    ],
  };
  return fetch(`${svc.url}/v1/messages`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': 'sk-ant-test',
      'anthropic-version': '2023-06-01',
    },
    body: JSON.stringify(body),
  });
}

beforeAll(async () => {
  await startUpstream();
  [browser, svc] = await Promise.all([
    launchBrowser(),
    startServer({
      compress: createFakeCompress(),
      flags: { 'compat-api-url': upstreamUrl, 'messages-api-url': upstreamUrl },
    }),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await svc?.close();
  await new Promise((resolve) => upstream?.close(resolve));
});

describe('dashboard with traffic through the proxy', () => {
  it('shows the same live numbers as /stats after requests through the proxy', async () => {
    const { page, problems } = await openDashboard(browser, svc.url, '?poll=250');
    await waitForPolls(page, 1);
    const statuses = [];
    for (const last of ['first', 'second', 'third']) statuses.push((await chat(last)).status);
    for (const last of ['fourth', 'fifth']) statuses.push((await messages(last)).status);
    statuses.push((await chat('please fail')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 500]);
    // Write the savings file now, not during the comparison below (see history.test.ts).
    await svc.server.ctx.savings?.flush();

    await page.waitForFunction(
      () => document.querySelector<HTMLElement>('[data-field="requests.total"]')?.dataset.value === '6',
    );
    await waitForPolls(page, Number(await page.evaluate(() => document.documentElement.dataset.polls)) + 1);
    const stats = await (await fetch(`${svc.url}/stats`)).json();
    expect(stats.requests.total).toBe(6);
    expect(stats.requests.failed).toBe(1);
    expect(stats.tokens.saved).toBeGreaterThan(0);
    expect(stats.cost.total_cost_usd).toBeGreaterThan(0);
    const shown = await shownFields(page);
    for (const [path, { value }] of Object.entries(shown)) expect(value, path).toEqual(pick(stats, path));
    expect(shown['tokens.saved']?.text.replaceAll(',', '')).toBe(String(stats.tokens.saved));
    expect(shown['tokens.input']?.text.replaceAll(',', '')).toBe(String(stats.tokens.input));

    // The histogram of compression ratios counts the five compressed requests.
    await page.locator('#ratio-chart canvas').waitFor();
    expect(await page.locator('#ratio-chart').getAttribute('data-points')).toBe('10');
    // And the durable history has them too.
    const lifetime = await shownFields(page, 'data-history-field');
    expect(lifetime['lifetime.tokens_saved']?.value).toBe(stats.persistent_savings.lifetime.tokens_saved);
    expect(problems).toEqual([]);
  });
});
