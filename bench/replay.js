#!/usr/bin/env node
/**
 * Replay bench: a 200-turn agent session (built by the fixture generator) sent turn by turn through the real
 * proxy (`dist/`) to a mock upstream on loopback. Reports per-request proxy
 * overhead as the history grows, whether the forwarded body keeps the
 * previous turn's messages as a byte-identical prefix (before the context
 * limit is first reached, and between cuts after it), and where cuts happen.
 *
 * With `--bypass` every request carries `x-service-bypass: true`: the proxy
 * reads, parses and forwards the body without compressing it, which is the
 * floor any body-reading proxy pays; compare its overhead with a normal run.
 *
 *   npm run build && node bench/replay.js [--turns 200] [--context-limit 60000] [--bypass] [--json]
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Table from 'cli-table3';
import { resolveConfig } from '../dist/src/config/index.js';
import { arrayItemSpans, objectMemberSpans } from '../dist/src/json/spans.js';
import { silentLogger } from '../dist/src/log.js';
import { createSvcServer } from '../dist/src/server/app.js';
import { buildSession, KINDS, toMessagesBody } from '../fixtures/lib/conversation.js';
import { createRng } from '../fixtures/lib/rng.js';

const { values: args } = parseArgs({
  options: {
    turns: { type: 'string', default: '200' },
    'context-limit': { type: 'string', default: '60000' },
    json: { type: 'boolean', default: false },
    bypass: { type: 'boolean', default: false },
  },
});
const TURNS = Number(args.turns);
const LIMIT = Number(args['context-limit']);

/** What an agent sends besides its messages (as Claude Code does: tools after the messages). */
const TOOLS = ['http_get', 'bash', 'grep', 'read_file', 'fetch_url'].map((name) => ({
  name,
  description: `The ${name} tool of the agent.`,
  input_schema: { type: 'object', properties: { arg: { type: 'string' } } },
}));

/**
 * The session, from the fixture generator (`fixtures/lib`): a task, then one
 * tool round per turn cycling through every content kind (JSON, logs, build
 * logs, grep hits, diffs, code, HTML, prose) at about 900 tokens per output;
 * every 10th turn the user says something new.
 */
function session(turns) {
  const names = Object.keys(KINDS);
  const kinds = Array.from({ length: turns }, (_, i) => names[i % names.length]);
  const body = toMessagesBody(buildSession(createRng(42), kinds, { scale: 0.45 }));
  const messages = [body.messages[0]];
  const ends = [];
  for (let n = 0; n < turns; n += 1) {
    if (n > 0 && n % 10 === 0) {
      messages.push({ role: 'assistant', content: `Checkpoint ${n}: still investigating.` });
      messages.push({ role: 'user', content: `Now look at the ${kinds[n]} output of step ${n}.` });
    }
    messages.push(body.messages[1 + 2 * n], body.messages[2 + 2 * n]);
    ends.push(messages.length);
  }
  return { messages, ends, system: body.system };
}

function startMock() {
  // Only the latest body is kept: the bench's own memory must not hide the proxy's.
  const bodies = { last: undefined };
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    bodies.last = Buffer.concat(chunks).toString('utf8');
    const text = JSON.stringify({
      id: 'msg',
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: 'ok' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 1, output_tokens: 1 },
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, bodies, url: `http://127.0.0.1:${server.address().port}` }),
    ),
  );
}

/** Text of the body up to the end of its last message (the part a prompt cache can reuse). */
function messagesPrefix(text) {
  const members = objectMemberSpans(text, text.indexOf('{'));
  const messages = members.find((m) => m.key === 'messages');
  const items = arrayItemSpans(text, messages.value.start);
  return text.slice(0, items.at(-1).end);
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
};
const round2 = (x) => Math.round(x * 100) / 100;

/** Sends one body through the proxy; its `request.finished` event and the body the upstream got. */
async function send(base, mock, body, events, extra = {}) {
  const seen = events.length;
  const res = await fetch(`${base}/v1/messages`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': 'bench',
      ...(args.bypass ? { 'x-service-bypass': 'true' } : {}),
      ...extra,
    },
    body,
  });
  await res.arrayBuffer();
  while (events.length <= seen) await new Promise((r) => setTimeout(r, 1));
  return { event: events[seen], forwarded: mock.bodies.last };
}

async function main() {
  const home = mkdtempSync(join(tmpdir(), 'svc-replay-'));
  const mock = await startMock();
  const config = resolveConfig({
    flags: { port: 0, host: '127.0.0.1', 'messages-api-url': `${mock.url}/v1`, 'context-limit': LIMIT },
    env: { SERVICE_HOME: home },
  });
  const svc = await createSvcServer({ config, logger: silentLogger });
  const base = await svc.listen();
  const events = [];
  svc.ctx.bus.on('request.finished', (e) => events.push(e));
  const { messages, ends, system } = session(TURNS);
  const rows = [];
  const fingerprint = createHash('sha256');
  let previous;
  for (let t = 0; t < TURNS; t += 1) {
    // Encoded before the clock starts: the client's own work is not the proxy's overhead.
    const body = Buffer.from(
      JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 4096,
        system,
        messages: messages.slice(0, ends[t]),
        tools: TOOLS,
      }),
    );
    // Sent twice: first as the agent sends it (new content to compress), then again (everything
    // seen: what is left is the per-request cost of the history itself). The repeat bypasses the
    // response cache and must forward the same bytes.
    const first = await send(base, mock, body, events);
    const repeat = await send(base, mock, body, events, { 'x-service-cache': 'bypass' });
    const e = first.event;
    const forwarded = first.forwarded;
    fingerprint.update(`${forwarded}\n`);
    const cut = e.transforms.find((x) => x.startsWith('context:drop:'));
    const acted = e.transforms.some((x) => x.startsWith('context:'));
    rows.push({
      turn: t + 1,
      overheadMs: e.overheadMs,
      repeatMs: repeat.event.overheadMs,
      repeatSame: repeat.forwarded === forwarded,
      tokensBefore: e.tokensBefore,
      tokensAfter: e.tokensAfter,
      dropped: cut ? Number(cut.split(':').at(-1)) : 0,
      harder: Number(
        e.transforms
          .find((x) => x.startsWith('context:compress_harder:'))
          ?.split(':')
          .at(-1) ?? 0,
      ),
      acted,
      reused: e.transforms.includes('context:reused_cut'),
      prefixKept: previous !== undefined && forwarded.startsWith(messagesPrefix(previous)),
    });
    previous = forwarded;
  }
  global.gc?.();
  const { rss: rssAfter, heapUsed: heapAfter } = process.memoryUsage();
  await svc.close(100);
  mock.server.close();
  rmSync(home, { recursive: true, force: true });

  const firstCut = rows.findIndex((r) => r.acted);
  const before = rows.slice(1, firstCut < 0 ? rows.length : firstCut);
  const newCuts = rows.filter((r) => r.acted && !r.reused).map((r) => r.turn);
  const afterFirst = firstCut < 0 ? [] : rows.slice(firstCut + 1);
  const afterStable = afterFirst.filter((r) => !newCuts.includes(r.turn));
  const buckets = [];
  for (let i = 0; i < rows.length; i += 25) {
    const b = rows.slice(i, i + 25);
    buckets.push({
      turns: `${b[0].turn}-${b.at(-1).turn}`,
      p50: round2(
        quantile(
          b.map((r) => r.overheadMs),
          0.5,
        ),
      ),
      p95: round2(
        quantile(
          b.map((r) => r.overheadMs),
          0.95,
        ),
      ),
      repeatP50: round2(
        quantile(
          b.map((r) => r.repeatMs),
          0.5,
        ),
      ),
      tokensIn: b.at(-1).tokensBefore,
      tokensOut: b.at(-1).tokensAfter,
      prefixKept: `${b.filter((r) => r.prefixKept).length}/${b.filter((r) => r.turn > 1).length}`,
      cuts: b.filter((r) => r.acted && !r.reused).length,
      dropped: b.at(-1).dropped,
      harder: b.at(-1).harder,
    });
  }
  const summary = {
    turns: TURNS,
    contextLimit: LIMIT,
    limitFirstReachedAtTurn: firstCut < 0 ? null : firstCut + 1,
    newCutTurns: newCuts,
    prefixIdenticalBeforeLimit: `${before.filter((r) => r.prefixKept).length}/${before.length}`,
    prefixIdenticalAfterCutsExceptNewCuts: `${afterStable.filter((r) => r.prefixKept).length}/${afterStable.length}`,
    overheadP50FirstQuarterMs: buckets[0]?.p50,
    overheadP50LastQuarterMs: buckets.at(-1)?.p50,
    repeatP50FirstQuarterMs: buckets[0]?.repeatP50,
    repeatP50LastQuarterMs: buckets.at(-1)?.repeatP50,
    repeatForwardedIdentical: `${rows.filter((r) => r.repeatSame).length}/${rows.length}`,
    maxTokensForwarded: Math.max(...rows.map((r) => r.tokensAfter)),
    /** Memory of the whole bench process (proxy, mock upstream and client) after the last turn. */
    rssMbAfter: Math.round(rssAfter / 1024 / 1024),
    heapUsedMbAfter: Math.round(heapAfter / 1024 / 1024),
    /** Fingerprint of every forwarded body: equal across runs when behaviour is unchanged. */
    forwardedSha256: fingerprint.digest('hex').slice(0, 16),
  };
  if (args.json) {
    console.log(JSON.stringify({ summary, buckets }, null, 2));
    return;
  }
  const table = new Table({
    head: [
      'turns',
      'overhead p50 ms',
      'p95 ms',
      'repeat p50 ms',
      'tokens in',
      'tokens fwd',
      'prefix kept',
      'new cuts',
      'msgs dropped',
      'harder',
    ],
  });
  for (const b of buckets)
    table.push([
      b.turns,
      b.p50,
      b.p95,
      b.repeatP50,
      b.tokensIn,
      b.tokensOut,
      b.prefixKept,
      b.cuts,
      b.dropped,
      b.harder,
    ]);
  console.log(
    `replay: ${TURNS}-turn agent session, context limit ${LIMIT} tokens (messages format, claude-sonnet-4-5, max_tokens 4096, system + 4 tools)${args.bypass ? ', x-service-bypass' : ''}`,
  );
  console.log(table.toString());
  for (const [k, v] of Object.entries(summary)) console.log(`${k}: ${Array.isArray(v) ? v.join(', ') : v}`);
}

await main();
