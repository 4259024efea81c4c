#!/usr/bin/env node
/**
 * Where the eval's tokens are, and how far compression could go. Runs the
 * engine (`dist/`, default options) on the cases of ../shared/eval/dev and
 * counts tokens as the scorer does (o200k_base: content text + tool-call
 * names and arguments + 4 per message), per message category:
 *
 * - tool outputs by what the call did (`toolKind`: read, list, doc, or other)
 *   and by detected content type, e.g. `tool:read:code`;
 * - assistant messages with tool calls by their first call's name, e.g.
 *   `asst+calls:Edit`; other messages by role (never compressed).
 *
 * Then upper bounds on the savings, per source, with everything else as the
 * engine leaves it now:
 * - B1: every tool output that is not a read, listing or doc is deleted;
 * - B2: B1, and doc outputs (fetched pages, subagent reports) deleted too;
 * - B3: B2, and reads/listings lose every line number and all indentation;
 * - B4: B1, and the arguments of Write/Edit/MultiEdit/apply_patch calls deleted.
 * They show what the fidelity rules (reads lossless, pages and reports
 * verbatim, user/assistant/system messages untouched) leave reachable.
 *
 *   npm run build && node bench/eval-breakdown.js [--cases DIR] [--source claude-code,codex] [--top 30]
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { compressMessages, tokenizerFor } from '../dist/src/engine/index.js';
import { detectContentType, toolKind } from '../dist/src/engine/router.js';
import { ROOT, requireBuild } from './lib/measure.js';

requireBuild();
const { values: args } = parseArgs({
  options: {
    cases: { type: 'string', default: join(ROOT, '..', 'shared', 'eval', 'dev') },
    source: { type: 'string', default: 'claude-code,codex' },
    top: { type: 'string', default: '30' },
  },
});

if (!existsSync(args.cases)) {
  console.log(`eval-breakdown: ${args.cases} not found; skipped`);
  process.exit(0);
}
const tok = tokenizerFor('gpt-4o');
const textOf = (content) =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content
          .map((p) => (typeof p === 'string' ? p : typeof p?.text === 'string' ? p.text : ''))
          .filter((s) => s.length > 0)
          .join('\n')
      : '';
const count = (s) => (s ? tok.countText(s) : 0);
/** Tokens of a message as the scorer counts them. */
const tokensOf = (m) => {
  let n = count(textOf(m.content)) + 4;
  for (const c of m.tool_calls ?? []) n += count(c.function?.name ?? '') + count(c.function?.arguments ?? '');
  return n;
};
const WRITES = /^(?:Write|Edit|MultiEdit|apply_patch)$/;
const writeArgs = (m) =>
  (m.tool_calls ?? [])
    .filter((c) => WRITES.test(c.function?.name ?? ''))
    .reduce((n, c) => n + count(c.function?.arguments ?? ''), 0);
/** A read with no line numbers and no indentation (B3). */
const bare = (text) =>
  count(
    text
      .split('\n')
      .map((l) => l.replace(/^ *\d+(?:→|\t)/, '').trimStart())
      .join('\n'),
  ) + 4;

const breakdown = new Map();
const sources = new Map();
const wanted = new Set(args.source.split(','));
const files = readdirSync(args.cases).filter((f) => f.endsWith('.json') && f !== 'MANIFEST.json');
for (const file of files) {
  const c = JSON.parse(readFileSync(join(args.cases, file), 'utf8'));
  const { result, messageOrigin } = compressMessages(c.messages, { model: c.model || 'gpt-4o' });
  const calls = new Map();
  for (const m of c.messages) for (const call of m.tool_calls ?? []) calls.set(call.id, call);
  const after = new Array(c.messages.length).fill(0);
  const floor = new Array(c.messages.length).fill(0);
  result.messages.forEach((m, j) => {
    const o = messageOrigin[j];
    if (o < 0) return;
    after[o] += tokensOf(m);
    floor[o] += bare(textOf(m.content));
  });
  const s = sources.get(c.source) ?? { before: 0, now: 0, b1: 0, b2: 0, b3: 0, b4: 0 };
  sources.set(c.source, s);
  c.messages.forEach((m, i) => {
    const before = tokensOf(m);
    let kind;
    let category = m.role;
    if (m.role === 'tool') {
      const call = calls.get(m.tool_call_id);
      kind = toolKind(call?.function?.name ?? '', call?.function?.arguments ?? '') ?? 'other';
      category = `tool:${kind}:${detectContentType(textOf(m.content))}`;
    } else if (m.tool_calls?.length) category = `asst+calls:${m.tool_calls[0].function?.name}`;
    if (wanted.has(c.source)) {
      const key = `${c.source} ${category}`;
      const row = breakdown.get(key) ?? { n: 0, before: 0, after: 0 };
      row.n++;
      row.before += before;
      row.after += after[i];
      breakdown.set(key, row);
    }
    const other = m.role === 'tool' && kind === 'other';
    const doc = kind === 'doc';
    s.before += before;
    s.now += after[i];
    s.b1 += other ? 4 : after[i];
    s.b2 += other || doc ? 4 : after[i];
    s.b3 += other || doc ? 4 : kind === 'read' || kind === 'list' ? floor[i] : after[i];
    s.b4 += (other ? 4 : after[i]) - writeArgs(m);
  });
}

const pct = (part, whole) => (whole ? (100 * part) / whole : 0).toFixed(1);
const totals = new Map();
for (const [key, row] of breakdown) {
  const src = key.split(' ')[0];
  totals.set(src, (totals.get(src) ?? 0) + row.before);
}
console.log(
  'category (source kind:type) | messages | tokens before | after | share of source | saved % | left (% of source)',
);
const rows = [...breakdown].sort((a, b) => b[1].after - a[1].after).slice(0, Number(args.top));
for (const [key, r] of rows) {
  const whole = totals.get(key.split(' ')[0]);
  console.log(
    `${key} | ${r.n} | ${r.before} | ${r.after} | ${pct(r.before, whole)} | ${pct(r.before - r.after, r.before)} | ${pct(r.after, whole)}`,
  );
}
console.log('\nsavings % per source: now, and upper bounds B1-B4 (see the header of this script)');
console.log('source | now | B1 | B2 | B3 | B4');
const all = { before: 0, now: 0, b1: 0, b2: 0, b3: 0, b4: 0 };
const line = (name, s) =>
  console.log(
    [name, ...['now', 'b1', 'b2', 'b3', 'b4'].map((k) => pct(s.before - s[k], s.before))].join(' | '),
  );
for (const [name, s] of [...sources].sort()) {
  for (const k of Object.keys(all)) all[k] += s[k];
  line(name, s);
}
line('overall', all);
