#!/usr/bin/env node
/**
 * Codex replay: every dev Codex session of the eval (the longest case of
 * each conversation), rebuilt as the OpenAI Responses requests Codex sends
 * (scripts/codex-responses.js) and replayed request by request through the
 * real proxy (`dist/`) on `/v1/responses` to a loopback upstream that keeps
 * what it receives. Per session: requests, busts (a forwarded request whose
 * input items do not start with the previous request's forwarded items, byte
 * for byte), the requests where the engine dropped items (past the model's
 * context budget), head changes (a request whose fields before `input`,
 * tools included, differ from the previous one's: svc adds its retrieval
 * tool once, on the first request that holds a marker), and tokens saved.
 *
 *   npm run build && node bench/codex-replay.js [--cases ../shared/eval/dev] [--model gpt-5-codex]
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { resolveConfig } from '../dist/src/config/index.js';
import { arrayItemSpans, objectMemberSpans } from '../dist/src/json/spans.js';
import { silentLogger } from '../dist/src/log.js';
import { createSvcServer } from '../dist/src/server/app.js';
import { codexBody, codexToResponses } from '../scripts/codex-responses.js';

const { values: args } = parseArgs({
  options: {
    cases: { type: 'string', default: '../shared/eval/dev' },
    model: { type: 'string', default: 'gpt-5-codex' },
  },
});

/** The longest case of each Codex conversation. */
function sessions(dir) {
  const byConversation = new Map();
  for (const name of readdirSync(dir).filter((f) => f.startsWith('codex_') && f.endsWith('.json'))) {
    const c = JSON.parse(readFileSync(join(dir, name), 'utf8'));
    const key = c.meta?.conversation ?? c.id;
    const known = byConversation.get(key);
    if (!known || c.messages.length > known.messages.length) byConversation.set(key, c);
  }
  return [...byConversation.values()];
}

const SSE =
  'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","output":[]}}\n\n' +
  'event: response.completed\ndata: {"type":"response.completed","sequence_number":1,"response":{"id":"resp_1","object":"response","status":"completed","output":[],"usage":{"input_tokens":1,"output_tokens":1}}}\n\n';

async function mockUpstream() {
  const received = [];
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    received.push(Buffer.concat(chunks).toString('utf8'));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(SSE);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`, received, close: () => server.close() };
}

function inputItems(text) {
  const members = objectMemberSpans(text, text.indexOf('{'));
  const input = members.find((m) => m.key === 'input');
  return arrayItemSpans(text, input.value.start).map((s) => text.slice(s.start, s.end));
}

/** Everything before `input` (instructions, tools, settings) as forwarded. */
function head(text) {
  const members = objectMemberSpans(text, text.indexOf('{'));
  return text.slice(0, members.find((m) => m.key === 'input').value.start);
}

const upstream = await mockUpstream();
const home = mkdtempSync(join(tmpdir(), 'svc-codex-replay-'));
const config = resolveConfig({
  flags: { port: 0, host: '127.0.0.1', 'compat-api-url': `${upstream.url}/v1` },
  env: { SERVICE_HOME: home },
});
const svc = await createSvcServer({ config, logger: silentLogger });
const base = await svc.listen();
const events = [];
svc.ctx.bus.on('request.finished', (e) => events.push(e));

const totals = {
  sessions: 0,
  requests: 0,
  busts: 0,
  drops: 0,
  head_changes: 0,
  tokens_before: 0,
  tokens_after: 0,
};
for (const c of sessions(args.cases)) {
  const conversation = codexToResponses(c.messages);
  let previous = [];
  let previousHead;
  const row = {
    session: c.meta?.conversation ?? c.id,
    requests: 0,
    busts: 0,
    bust_at: [],
    drops: 0,
    head_changes: 0,
    tokens_before: 0,
    tokens_after: 0,
  };
  for (const count of conversation.turns) {
    const first = events.length;
    const res = await fetch(`${base}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-replay' },
      body: JSON.stringify(codexBody(conversation, count, args.model)),
    });
    await res.text();
    while (events.length === first) await new Promise((r) => setTimeout(r, 1));
    const e = events.at(-1);
    const items = inputItems(upstream.received.at(-1));
    const now = head(upstream.received.at(-1));
    if (previousHead !== undefined && now !== previousHead) row.head_changes += 1;
    previousHead = now;
    row.requests += 1;
    if (items.length < count) row.drops += 1;
    else if (previous.some((item, i) => items[i] !== item)) {
      row.busts += 1;
      if (row.bust_at.length < 5) row.bust_at.push(count);
      if (process.env.CODEX_REPLAY_DEBUG) {
        const i = previous.findIndex((item, k) => items[k] !== item);
        console.error(
          `bust at request ${row.requests} (item ${i}):\n  was ${previous[i].slice(0, 400)}\n  now ${items[i].slice(0, 400)}`,
        );
      }
    }
    previous = items;
    row.tokens_before += e.tokensBefore ?? 0;
    row.tokens_after += e.tokensAfter ?? e.tokensBefore ?? 0;
  }
  row.tokens_saved_pct = row.tokens_before
    ? +((1 - row.tokens_after / row.tokens_before) * 100).toFixed(1)
    : 0;
  console.log(JSON.stringify(row));
  totals.sessions += 1;
  for (const k of ['requests', 'busts', 'drops', 'head_changes', 'tokens_before', 'tokens_after'])
    totals[k] += row[k];
}
totals.tokens_saved_pct = totals.tokens_before
  ? +((1 - totals.tokens_after / totals.tokens_before) * 100).toFixed(1)
  : 0;
console.log(JSON.stringify({ summary: true, ...totals }));
await svc.close(1000);
upstream.close();
rmSync(home, { recursive: true, force: true });
