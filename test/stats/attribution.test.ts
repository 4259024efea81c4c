import Anthropic from '@anthropic-ai/sdk';
import { parse } from 'csv-parse/sync';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BreakdownRecord, BreakdownRow } from '../../src/stats/breakdown.js';
import type { HistoryByRecord } from '../../src/stats/history-by.js';
import type { HistoryRecord } from '../../src/stats/history-record.js';
import type { StatsRecord } from '../../src/stats/stats-record.js';
import { createFakeCompress } from '../server/fake-engine.js';
import {
  longText,
  type MockUpstream,
  replyJson,
  startMockUpstream,
  startSvc,
  type TestSvc,
  until,
} from '../server/helpers.js';
import { CHAT_REPLY, MESSAGES_REPLY } from '../server/sse-mocks.js';
import { parsePrometheusText } from './prom-text.js';

// Issue 18, item 7: savings, cost and requests by project (x-svc-project or a
// /p/NAME/ base-URL prefix), model, client (user agent) and key hash. Real
// SDKs and real CLI user agents, a loopback mock upstream; every breakdown
// must add up to the totals.

const CLAUDE_CODE_UA = 'claude-cli/2.0.14 (external, cli)';
const CODEX_UA = 'codex_cli_rs/0.46.0 (Ubuntu 24.4.0; x86_64) xterm-256color';

let svc: TestSvc;
let upstream: MockUpstream;

beforeAll(async () => {
  upstream = await startMockUpstream((req, res) => {
    const body = JSON.parse(req.body.toString()) as { model: string };
    if (req.url.startsWith('/v1/chat/completions')) replyJson(res, 200, { ...CHAT_REPLY, model: body.model });
    else replyJson(res, 200, { ...MESSAGES_REPLY, model: body.model });
  });
  svc = await startSvc({
    compress: createFakeCompress(),
    flags: {
      'messages-api-url': `${upstream.url}/v1`,
      'compat-api-url': `${upstream.url}/v1`,
      cache: false,
      'rate-limit': false,
    },
  });
});

afterAll(async () => {
  await svc?.close();
  await upstream?.close();
});

const TOOL_OUTPUT = longText('build', 60);
const anthropicConversation = (label: string): Anthropic.MessageParam[] => [
  { role: 'user', content: `run the build (${label})` },
  { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'bash', input: { cmd: 'make' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: TOOL_OUTPUT }] },
  { role: 'assistant', content: 'It failed.' },
  { role: 'user', content: 'why?' },
];
const chatConversation = (label: string) => [
  { role: 'user', content: `read the log (${label})` },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: 'c1', content: TOOL_OUTPUT },
  { role: 'user', content: 'summary?' },
];

async function post(path: string, body: unknown, headers: Record<string, string>): Promise<Response> {
  return fetch(`${svc.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

const TOTAL = 6;

/** Sends the six requests the tests read (once). */
async function drive(): Promise<void> {
  // 1. the Anthropic SDK through a /p/alpha base URL: project alpha, client anthropic-sdk.
  const anthropic = new Anthropic({ apiKey: 'sk-ant-alpha', baseURL: `${svc.url}/p/alpha`, maxRetries: 0 });
  await anthropic.messages.create({
    model: 'claude-sonnet-4-6',
    max_tokens: 100,
    messages: anthropicConversation('sdk'),
  });
  // 2. the OpenAI SDK with the x-svc-project header: project beta, client openai-sdk.
  const openai = new OpenAI({
    apiKey: 'sk-openai-beta',
    baseURL: `${svc.url}/v1`,
    maxRetries: 0,
    defaultHeaders: { 'x-svc-project': 'beta' },
  });
  await openai.chat.completions.create({
    model: 'gpt-4o',
    messages: chatConversation('sdk') as OpenAI.Chat.ChatCompletionMessageParam[],
  });
  // 3. Claude Code's user agent through /p/beta (as ANTHROPIC_BASE_URL=http://.../p/beta sends it).
  let res = await post(
    '/p/beta/v1/messages',
    { model: 'claude-sonnet-4-6', max_tokens: 100, messages: anthropicConversation('cc') },
    { 'user-agent': CLAUDE_CODE_UA, 'x-api-key': 'sk-ant-alpha', 'anthropic-version': '2023-06-01' },
  );
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  // 4. Codex's user agent, no project: project default.
  res = await post(
    '/v1/chat/completions',
    { model: 'gpt-4o', messages: chatConversation('codex') },
    { 'user-agent': CODEX_UA, authorization: 'Bearer sk-codex' },
  );
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  // 5. the prefix wins over the header; a model with no price (unpriced request).
  res = await post(
    '/p/alpha/v1/chat/completions',
    { model: 'mystery-model-1', messages: chatConversation('curl') },
    { 'user-agent': 'curl/8.5.0', authorization: 'Bearer sk-codex', 'x-svc-project': 'beta' },
  );
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  // 6. nothing to compress: counted, no saving.
  res = await post(
    '/v1/messages',
    { model: 'claude-sonnet-4-6', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] },
    { 'x-api-key': 'sk-ant-alpha', 'anthropic-version': '2023-06-01', 'x-svc-project': 'beta' },
  );
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  await until(() => svc.events.length >= TOTAL);
}

const sum = (rows: Record<string, BreakdownRow>, field: keyof BreakdownRow) =>
  Object.values(rows).reduce((n, row) => n + row[field], 0);

describe('attribution by project, model, client and key hash', () => {
  let stats: StatsRecord & { breakdown: BreakdownRecord };
  beforeAll(async () => {
    await drive();
    stats = (await (await fetch(`${svc.url}/stats`)).json()) as typeof stats;
  });

  it('strips the /p/NAME/ prefix and the x-svc-project header before forwarding', () => {
    expect(upstream.requests.map((r) => r.url)).toEqual([
      '/v1/messages',
      '/v1/chat/completions',
      '/v1/messages',
      '/v1/chat/completions',
      '/v1/chat/completions',
      '/v1/messages',
    ]);
    for (const r of upstream.requests) expect(r.headers['x-svc-project']).toBeUndefined();
  });

  it('attributes each request to its project, model and client', () => {
    const b = stats.breakdown;
    expect(stats.requests.total).toBe(TOTAL);
    expect(Object.fromEntries(Object.entries(b.project).map(([k, v]) => [k, v.requests]))).toEqual({
      alpha: 2,
      beta: 3,
      default: 1,
    });
    expect(Object.fromEntries(Object.entries(b.client).map(([k, v]) => [k, v.requests]))).toEqual({
      'anthropic-sdk': 1,
      'openai-sdk': 1,
      'claude-code': 1,
      codex: 1,
      other: 2,
    });
    expect(Object.fromEntries(Object.entries(b.model).map(([k, v]) => [k, v.requests]))).toEqual({
      'claude-sonnet-4-6': 3,
      'gpt-4o': 2,
      'mystery-model-1': 1,
    });
    // three distinct keys (sk-ant-alpha, sk-openai-beta, sk-codex): hashes, never the keys
    expect(Object.keys(b.key)).toHaveLength(3);
    for (const k of Object.keys(b.key)) expect(k).toMatch(/^[0-9a-f]{12}$/);
    expect(JSON.stringify(b)).not.toContain('sk-');
    expect(b.model['mystery-model-1']!.unpriced_requests).toBe(1);
    expect(b.project.alpha!.tokens_saved).toBeGreaterThan(0);
    expect(b.project.beta!.cost_usd).toBeGreaterThan(0);
  });

  it('each /stats breakdown adds up to the totals', () => {
    expect(stats.tokens.saved).toBeGreaterThan(0);
    expect(stats.cost.unpriced_requests).toBe(1);
    for (const d of ['project', 'model', 'client', 'key'] as const) {
      const rows = stats.breakdown[d];
      expect(sum(rows, 'requests'), d).toBe(stats.requests.total);
      expect(sum(rows, 'tokens_input'), d).toBe(stats.tokens.input);
      expect(sum(rows, 'tokens_sent'), d).toBe(stats.tokens.sent);
      expect(sum(rows, 'tokens_saved'), d).toBe(stats.tokens.saved);
      expect(sum(rows, 'cost_usd'), d).toBeCloseTo(stats.cost.total_cost_usd, 9);
      expect(sum(rows, 'savings_usd'), d).toBeCloseTo(stats.cost.total_savings_usd, 9);
      expect(sum(rows, 'unpriced_requests'), d).toBe(stats.cost.unpriced_requests);
      // the cache-aware saving (issue 18, item 3) beside the others, per value
      for (const row of Object.values(rows)) {
        expect(typeof row.cache_aware_savings_usd, d).toBe('number');
        expect(typeof row.cache_aware_requests, d).toBe('number');
      }
      expect(sum(rows, 'cache_aware_savings_usd'), d).toBeCloseTo(stats.cost.cache_aware_savings_usd, 9);
      expect(sum(rows, 'cache_aware_requests'), d).toBe(stats.cost.cache_aware_requests);
    }
  });

  it('the cache-aware saving is known per value, and unknown (not 0) where it is', () => {
    // the mock upstream reports cache reads and writes, so the figure is non-zero
    expect(stats.cost.cache_aware_savings_usd).not.toBe(0);
    expect(stats.cost.cache_aware_requests).toBeGreaterThan(0);
    const b = stats.breakdown;
    // the model with no price has no cache-aware figure: 0 requests known, not a saving of 0
    expect(b.model['mystery-model-1']!.cache_aware_requests).toBe(0);
    expect(b.model['claude-sonnet-4-6']!.cache_aware_requests).toBeGreaterThan(0);
    expect(b.model['claude-sonnet-4-6']!.cache_aware_savings_usd).not.toBe(0);
  });

  it('each /metrics breakdown adds up to the totals', async () => {
    const text = await (await fetch(`${svc.url}/metrics`)).text();
    const families = parsePrometheusText(text);
    const total = (name: string) => families.get(name)!.samples.reduce((n, s) => n + s.value, 0);
    const byDimension = (name: string, dimension: string) =>
      families
        .get(name)!
        .samples.filter((s) => s.labels.dimension === dimension)
        .reduce((n, s) => n + s.value, 0);
    for (const d of ['project', 'model', 'client', 'key']) {
      expect(byDimension('service_breakdown_requests_total', d), d).toBe(total('service_requests_total'));
      expect(byDimension('service_breakdown_tokens_input_total', d), d).toBe(
        total('service_tokens_input_total'),
      );
      expect(byDimension('service_breakdown_tokens_saved_total', d), d).toBe(
        total('service_tokens_saved_total'),
      );
      expect(byDimension('service_breakdown_cost_usd_total', d), d).toBeCloseTo(
        total('service_cost_usd_total'),
        9,
      );
      expect(byDimension('service_breakdown_savings_usd_total', d), d).toBeCloseTo(
        total('service_savings_usd_total'),
        9,
      );
      expect(byDimension('service_breakdown_cache_aware_savings_usd', d), d).toBeCloseTo(
        total('service_cache_aware_savings_usd'),
        9,
      );
    }
    expect(families.get('service_breakdown_cache_aware_savings_usd')!.type).toBe('gauge');
    expect(total('service_cache_aware_savings_usd')).not.toBe(0);
    const projects = families
      .get('service_breakdown_requests_total')!
      .samples.filter((s) => s.labels.dimension === 'project');
    expect(Object.fromEntries(projects.map((s) => [s.labels.value, s.value]))).toEqual({
      alpha: 2,
      beta: 3,
      default: 1,
    });
  });

  it('/stats-history?by= (JSON) splits the recorded savings and adds up to the totals', async () => {
    const plain = (await (await fetch(`${svc.url}/stats-history`)).json()) as HistoryRecord;
    expect(plain.lifetime.tokens_saved).toBe(stats.tokens.saved);
    expect(plain.lifetime).not.toHaveProperty('by');
    for (const by of ['project', 'model', 'client'] as const) {
      const res = await fetch(`${svc.url}/stats-history?by=${by}`);
      expect(res.status).toBe(200);
      const record = (await res.json()) as HistoryByRecord;
      expect(record.by).toBe(by);
      const tokens = record.values.reduce((n, v) => n + v.tokens_saved, 0);
      const usd = record.values.reduce((n, v) => n + v.compression_savings_usd, 0);
      const requests = record.values.reduce((n, v) => n + v.requests, 0);
      expect(tokens, by).toBe(plain.lifetime.tokens_saved);
      expect(usd, by).toBeCloseTo(plain.lifetime.compression_savings_usd, 9);
      expect(requests, by).toBe(plain.lifetime.requests);
      expect(record.values.map((v) => v.value)).not.toContain('unattributed');
      for (const period of ['hourly', 'daily', 'weekly', 'monthly'] as const) {
        for (const entry of plain.series[period].filter((e) => e.requests > 0)) {
          const rows = record.series[period].filter((r) => r.timestamp === entry.timestamp);
          expect(
            rows.reduce((n, r) => n + r.tokens_saved, 0),
            `${by} ${period}`,
          ).toBe(entry.tokens_saved);
          expect(
            rows.reduce((n, r) => n + r.requests, 0),
            `${by} ${period}`,
          ).toBe(entry.requests);
        }
      }
    }
    const byProject = (await (await fetch(`${svc.url}/stats-history?by=project`)).json()) as HistoryByRecord;
    const saved = Object.fromEntries(byProject.values.map((v) => [v.value, v.tokens_saved]));
    expect(saved).toEqual({
      alpha: stats.breakdown.project.alpha!.tokens_saved,
      beta: stats.breakdown.project.beta!.tokens_saved,
      default: stats.breakdown.project.default!.tokens_saved,
    });
  });

  it('/stats-history?by=&format=csv adds up to the totals, lifetime and per period', async () => {
    const plain = (await (await fetch(`${svc.url}/stats-history`)).json()) as HistoryRecord;
    for (const by of ['project', 'model', 'client'] as const) {
      const res = await fetch(`${svc.url}/stats-history?by=${by}&format=csv`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
      expect(res.headers.get('content-disposition')).toContain(`svc-history-by-${by}.csv`);
      const rows = parse(await res.text(), { columns: true }) as Record<string, string>[];
      expect(Object.keys(rows[0]!)).toEqual([
        by,
        'tokens_saved',
        'compression_savings_usd',
        'requests',
        'unpriced_tokens_saved',
      ]);
      expect(
        rows.reduce((n, r) => n + Number(r.tokens_saved), 0),
        by,
      ).toBe(plain.lifetime.tokens_saved);
      expect(
        rows.reduce((n, r) => n + Number(r.requests), 0),
        by,
      ).toBe(plain.lifetime.requests);
      const daily = parse(
        await (await fetch(`${svc.url}/stats-history?by=${by}&format=csv&series=daily`)).text(),
        {
          columns: true,
        },
      ) as Record<string, string>[];
      expect(Object.keys(daily[0]!).slice(0, 3)).toEqual(['timestamp', 'period_end', by]);
      expect(
        daily.reduce((n, r) => n + Number(r.tokens_saved), 0),
        by,
      ).toBe(plain.series.daily.reduce((n, e) => n + e.tokens_saved, 0));
    }
  });

  it('refuses an unknown ?by= with 400 naming the allowed values', async () => {
    const res = await fetch(`${svc.url}/stats-history?by=key`);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('project, model, client');
  });
});
