#!/usr/bin/env node
// Token counting and engine speed (issue 2, engine part). Run after a build:
//   npx tsc -p tsconfig.build.json && node bench/tokenizers.js
// 1. tiktoken vs gpt-tokenizer: same counts? which is faster? (o200k_base and
//    cl100k_base, over a generated agent conversation).
// 2. compressMessages on a ~100k-token conversation: median engine time
//    including exact counts, for fresh content (nothing memoized: a new
//    conversation each run) and for the same conversation again (per-content
//    memos warm, as on a proxy's next turn).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as gptCl100k from 'gpt-tokenizer/encoding/cl100k_base';
import * as gptO200k from 'gpt-tokenizer/encoding/o200k_base';
import { get_encoding } from 'tiktoken';
import { compressMessages } from '../dist/src/engine/index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RUNS = Number(process.env.BENCH_RUNS ?? 7);

/** Deterministic PRNG (mulberry32). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sourceFiles(dir, out = []) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) sourceFiles(p, out);
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out.sort();
}

/** A generated agent conversation of about `targetChars` characters; `salt` makes every run's content new. */
function conversation(targetChars, salt) {
  const rand = rng(42 + salt);
  const pick = (xs) => xs[Math.floor(rand() * xs.length)];
  const files = sourceFiles(join(ROOT, 'src'));
  const messages = [
    { role: 'system', content: 'You are a coding agent. Use the tools to inspect and fix the service.' },
  ];
  messages.push({
    role: 'user',
    content: `Run ${salt}: the checkout service fails under load, find out why.`,
  });
  let chars = 0;
  let n = 0;
  const kinds = ['log', 'json', 'grep', 'code', 'diff', 'prose'];
  while (chars < targetChars) {
    const kind = kinds[n % kinds.length];
    const id = `call_${salt}_${n++}`;
    let out;
    if (kind === 'log') {
      const lines = [];
      for (let i = 0; i < 400; i++) {
        const t = `2025-03-18T05:${String(10 + (i % 50)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}.${i}Z`;
        const level = rand() < 0.03 ? 'ERROR' : rand() < 0.08 ? 'WARN' : 'INFO';
        lines.push(
          `${t} ${level} checkout-${salt}-${Math.floor(rand() * 9)} req=${Math.floor(rand() * 1e6)} ${pick(['GET /health 200', 'POST /api/checkout 200', 'POST /api/checkout 500 upstream timeout', `cache miss sku-${Math.floor(rand() * 500)}`])}`,
        );
      }
      out = lines.join('\n');
    } else if (kind === 'json') {
      const items = [];
      for (let i = 0; i < 120; i++) {
        items.push({
          id: `ord_${salt}_${i}`,
          status: rand() < 0.05 ? 'failed' : 'ok',
          amount: Math.round(rand() * 10000) / 100,
          region: pick(['eu', 'us', 'ap']),
        });
      }
      out = JSON.stringify(items, null, 2);
    } else if (kind === 'grep') {
      const lines = [];
      for (let i = 0; i < 150; i++)
        lines.push(
          `${pick(files).slice(ROOT.length)}:${Math.floor(rand() * 300)}:  const value${salt} = compute(${i});`,
        );
      out = lines.join('\n');
    } else if (kind === 'code') {
      const text = readFileSync(pick(files), 'utf8');
      out = `${text
        .split('\n')
        .map((l, i) => `${String(i + 1).padStart(6)}→${l}`)
        .join('\n')}\n// ${salt}`;
    } else if (kind === 'diff') {
      const lines = [
        'diff --git a/src/app.ts b/src/app.ts',
        'index 1234567..89abcde 100644',
        '--- a/src/app.ts',
        '+++ b/src/app.ts',
      ];
      for (let h = 0; h < 20; h++) {
        lines.push(`@@ -${h * 40 + 1},12 +${h * 40 + 1},13 @@ function handler${h}() {`);
        for (let i = 0; i < 12; i++) lines.push(`   const context${i} = build(${i}, ${salt});`);
        lines.push(`+  retry(${h});`);
      }
      out = lines.join('\n');
    } else {
      const words = [
        'the',
        'service',
        'retries',
        'each',
        'request',
        'until',
        'the',
        'upstream',
        'answers',
        'or',
        'the',
        'deadline',
        'passes',
      ];
      const paras = [];
      for (let p = 0; p < 15; p++) paras.push(`${Array.from({ length: 60 }, () => pick(words)).join(' ')}.`);
      out = `${paras.join('\n\n')} (${salt})`;
    }
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: kind, arguments: `{"n":${n}}` } }],
    });
    messages.push({ role: 'tool', tool_call_id: id, content: out });
    chars += out.length;
  }
  messages.push({ role: 'user', content: 'What is the root cause?' });
  return messages;
}

const median = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
const ms = (fn) => {
  const t0 = process.hrtime.bigint();
  const r = fn();
  return [Number(process.hrtime.bigint() - t0) / 1e6, r];
};

// 1. tokenizers
const texts = conversation(400_000, 1)
  .map((m) => m.content ?? '')
  .filter(Boolean);
const totalChars = texts.reduce((a, t) => a + t.length, 0);
const rows = [];
for (const [name, gpt] of [
  ['o200k_base', gptO200k],
  ['cl100k_base', gptCl100k],
]) {
  const enc = get_encoding(name);
  const gptRuns = [];
  const tikRuns = [];
  let gptCount = 0;
  let tikCount = 0;
  for (let r = 0; r < RUNS; r++) {
    const variant = texts.map((t) => `${t} ${r}`); // new text each run: no cache of ours helps
    const [a, ga] = ms(() => variant.reduce((n, t) => n + gpt.countTokens(t), 0));
    const [b, tb] = ms(() => variant.reduce((n, t) => n + enc.encode_ordinary(t).length, 0));
    gptRuns.push(a);
    tikRuns.push(b);
    gptCount = ga;
    tikCount = tb;
  }
  enc.free();
  rows.push({
    encoding: name,
    chars: totalChars,
    'gpt-tokenizer tokens': gptCount,
    'tiktoken tokens': tikCount,
    same: gptCount === tikCount,
    'gpt-tokenizer ms': median(gptRuns).toFixed(1),
    'tiktoken ms': median(tikRuns).toFixed(1),
  });
}
console.log('Token counting, median of', RUNS, 'runs (first run includes warm-up)');
console.table(rows);

// 2. engine on ~100k tokens (one untimed call first: module load and JIT, as in a running proxy)
compressMessages(conversation(270_000, 99), { model: 'gpt-4o' });
const engineRows = [];
const fresh = [];
let tokens = 0;
for (let r = 0; r < RUNS; r++) {
  const convo = conversation(270_000, 100 + r);
  const [t, out] = ms(() => compressMessages(convo, { model: 'gpt-4o' }));
  fresh.push(t);
  tokens = out.result.tokens_before;
  if (r === 0)
    engineRows.push({
      case: 'result',
      tokens_before: out.result.tokens_before,
      tokens_after: out.result.tokens_after,
      'saved %': (100 * (1 - out.result.compression_ratio)).toFixed(1),
    });
}
const memo = new Map();
const same = conversation(270_000, 7);
const repeat = [];
for (let r = 0; r < RUNS; r++) repeat.push(ms(() => compressMessages(same, { model: 'gpt-4o', memo }))[0]);
console.log(
  `\nEngine: compressMessages on a generated conversation of ~${tokens} tokens (exact o200k counts included)`,
);
console.table(engineRows);
console.table([
  {
    run: 'fresh content each run',
    'median ms': median(fresh).toFixed(1),
    'min ms': Math.min(...fresh).toFixed(1),
    'max ms': Math.max(...fresh).toFixed(1),
    target: '< 200',
  },
  {
    run: 'same conversation, memo warm',
    'median ms': median(repeat).toFixed(1),
    'min ms': Math.min(...repeat).toFixed(1),
    'max ms': Math.max(...repeat).toFixed(1),
    target: '< 200',
  },
]);
