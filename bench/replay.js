#!/usr/bin/env node
/**
 * Replay bench: a 200-turn agent session sent turn by turn through the real
 * proxy (`dist/`) to a mock upstream on loopback. Reports per-request proxy
 * overhead as the history grows, whether the forwarded body keeps the
 * previous turn's messages as a byte-identical prefix (before the context
 * limit is first reached, and between cuts after it), and where cuts happen.
 *
 *   npm run build && node bench/replay.js [--turns 200] [--context-limit 60000] [--json]
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Table from 'cli-table3';
import { arrayItemSpans, objectMemberSpans } from '../dist/src/ccr/json-spans.js';
import { resolveConfig } from '../dist/src/config/index.js';
import { silentLogger } from '../dist/src/log.js';
import { createSvcServer } from '../dist/src/server/app.js';

const { values: args } = parseArgs({
  options: {
    turns: { type: 'string', default: '200' },
    'context-limit': { type: 'string', default: '60000' },
    json: { type: 'boolean', default: false },
  },
});
const TURNS = Number(args.turns);
const LIMIT = Number(args['context-limit']);

/** Deterministic pseudo-random numbers (seeded LCG). */
function rng(seed) {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

const WORDS =
  'build test deploy config cache retry timeout socket parser handler module client server queue worker index schema token stream buffer'.split(
    ' ',
  );

/** One tool round of a coding agent: a call and its (large) output, in the messages format. */
function toolRound(n, rand) {
  const kind = n % 4;
  const id = `toolu_${String(n).padStart(4, '0')}`;
  let name;
  let input;
  let output;
  if (kind === 0) {
    name = 'list_jobs';
    input = { page: n };
    output = JSON.stringify(
      Array.from({ length: 40 }, (_, i) => ({
        id: n * 100 + i,
        status: rand() < 0.05 ? 'failed' : 'ok',
        name: `${WORDS[(n + i) % WORDS.length]}_${i}`,
        duration_ms: Math.floor(rand() * 5000),
      })),
    );
  } else if (kind === 1) {
    name = 'bash';
    input = { cmd: `npm test -- src/${WORDS[n % WORDS.length]}.test.ts` };
    output = Array.from({ length: 60 }, (_, i) =>
      rand() < 0.04
        ? `ERROR ${WORDS[i % WORDS.length]} failed: expected ${i} got ${i + 1}\n    at run (src/${WORDS[n % WORDS.length]}.ts:${i}:3)`
        : `[${String(i).padStart(3, '0')}] ok ${WORDS[(i * 7 + n) % WORDS.length]} ${Math.floor(rand() * 100)}ms`,
    ).join('\n');
  } else if (kind === 2) {
    name = 'read_file';
    input = { path: `src/${WORDS[n % WORDS.length]}/${WORDS[(n * 3) % WORDS.length]}.ts` };
    output = Array.from(
      { length: 50 },
      (_, i) =>
        `export function ${WORDS[(i + n) % WORDS.length]}${i}(x: number): number {\n  return x * ${i} + ${n};\n}`,
    ).join('\n');
  } else {
    name = 'grep';
    input = { pattern: WORDS[n % WORDS.length] };
    output = Array.from(
      { length: 45 },
      (_, i) =>
        `src/${WORDS[(i + n) % WORDS.length]}.ts:${i * 3 + 1}: const ${WORDS[n % WORDS.length]} = ${WORDS[i % WORDS.length]}(${i});`,
    ).join('\n');
  }
  return [
    {
      role: 'assistant',
      content: [
        { type: 'text', text: `Step ${n}: running ${name}.` },
        { type: 'tool_use', id, name, input },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: output }] },
  ];
}

/** The session: a task, then tool rounds; every 10th turn the user says something new. */
function session(turns) {
  const rand = rng(42);
  const messages = [{ role: 'user', content: 'The CI build is red. Find out why and fix it.' }];
  const ends = [];
  for (let n = 0; n < turns; n += 1) {
    if (n > 0 && n % 10 === 0) {
      messages.push({ role: 'assistant', content: `Checkpoint ${n}: still investigating.` });
      messages.push({
        role: 'user',
        content: `Now look at the ${WORDS[n % WORDS.length]} module, turn ${n}.`,
      });
    }
    messages.push(...toolRound(n, rand));
    ends.push(messages.length);
  }
  return { messages, ends };
}

function startMock() {
  const bodies = [];
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    bodies.push(Buffer.concat(chunks).toString('utf8'));
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
  const items = arrayItemSpans(text, messages.value[0]);
  return text.slice(0, items.at(-1)[1]);
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
};
const round2 = (x) => Math.round(x * 100) / 100;

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
  const { messages, ends } = session(TURNS);
  const rows = [];
  for (let t = 0; t < TURNS; t += 1) {
    const body = JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      messages: messages.slice(0, ends[t]),
    });
    const started = performance.now();
    const res = await fetch(`${base}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'bench' },
      body,
    });
    await res.arrayBuffer();
    const wall = performance.now() - started;
    while (events.length <= t) await new Promise((r) => setTimeout(r, 1));
    const e = events[t];
    const forwarded = mock.bodies[t];
    const cut = e.transforms.find((x) => x.startsWith('context:drop:'));
    const acted = e.transforms.some((x) => x.startsWith('context:'));
    rows.push({
      turn: t + 1,
      overheadMs: e.overheadMs,
      wallMs: wall,
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
      prefixKept: t > 0 && forwarded.startsWith(messagesPrefix(mock.bodies[t - 1])),
    });
  }
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
    maxTokensForwarded: Math.max(...rows.map((r) => r.tokensAfter)),
    /** Fingerprint of every forwarded body: equal across runs when behaviour is unchanged. */
    forwardedSha256: createHash('sha256').update(mock.bodies.join('\n')).digest('hex').slice(0, 16),
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
      'tokens in',
      'tokens fwd',
      'prefix kept',
      'new cuts',
      'msgs dropped',
      'harder',
    ],
  });
  for (const b of buckets)
    table.push([b.turns, b.p50, b.p95, b.tokensIn, b.tokensOut, b.prefixKept, b.cuts, b.dropped, b.harder]);
  console.log(
    `replay: ${TURNS}-turn agent session, context limit ${LIMIT} tokens (messages format, claude-sonnet-4-5, max_tokens 4096)`,
  );
  console.log(table.toString());
  for (const [k, v] of Object.entries(summary)) console.log(`${k}: ${Array.isArray(v) ? v.join(', ') : v}`);
}

await main();
