#!/usr/bin/env node
// ML-compression bench: models with the real TinyBERT and BERT-base shapes
// (random weights, generated here, not committed) -> load time, ms per 512
// tokens, added latency per request, RSS. Run: npm run bench -- ml
// (or node bench/ml.js). Needs the optional runtime and a build (npm run build).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeModel } from '../scripts/make-ml-model.js';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const { startMlCompressor } = await import(join(root, 'dist/src/ml/ml-compressor.js'));
const WORDS =
  'error service request response timeout memory disk user file path server client data value result'.split(
    ' ',
  );

function text(words, salt) {
  const out = [];
  for (let i = 0; i < words; i++) out.push(WORDS[(i * 7 + salt) % WORDS.length]);
  return `${out.join(' ')} salt${salt}`;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const kinds = process.argv.slice(2).filter((a) => ['tiny', 'tinybert', 'bert-base'].includes(a));
const rows = [];
for (const kind of kinds.length > 0 ? kinds : ['tinybert', 'bert-base']) {
  const dir = join(root, 'bench', 'models', kind);
  const t0 = performance.now();
  if (!existsSync(join(dir, 'model.onnx'))) makeModel(kind, dir);
  const genMs = performance.now() - t0;
  const rssBefore = process.memoryUsage().rss;
  const t1 = performance.now();
  const ml = await startMlCompressor({
    modelDir: dir,
    device: 'cpu',
    rate: 0.3,
    timeoutMs: 60_000,
    minChars: 100,
  });
  const loadMs = performance.now() - t1;
  // ms per 512 tokens: one piece of 500 single-token words (+ [CLS]/[SEP] and the salt word)
  const per512 = [];
  for (let i = 0; i < 7; i++) {
    const t = performance.now();
    await ml.compress([
      { role: 'tool', tool_call_id: 'x', content: text(500, i) },
      { role: 'user', content: 'q' },
    ]);
    per512.push(performance.now() - t);
  }
  // a typical request: three new tool outputs of ~1500 tokens each, the rest memoized
  const request = [];
  for (let i = 0; i < 7; i++) {
    const messages = [
      { role: 'user', content: 'why is the service slow?' },
      ...[0, 1, 2].map((k) => ({
        role: 'tool',
        tool_call_id: `c${k}`,
        content: text(1500, 100 + i * 3 + k),
      })),
      { role: 'user', content: 'go on' },
    ];
    const t = performance.now();
    await ml.compress(messages);
    request.push(performance.now() - t);
  }
  const rss = process.memoryUsage().rss;
  rows.push({
    model: kind,
    'generate s': (genMs / 1000).toFixed(1),
    'load s': (loadMs / 1000).toFixed(2),
    'ms / 512 tok (p50)': median(per512).toFixed(1),
    'request ms (3x1.5k tok, p50)': median(request).toFixed(1),
    'RSS MB': Math.round(rss / 2 ** 20),
    'RSS added MB': Math.round((rss - rssBefore) / 2 ** 20),
  });
  await ml.close();
}
console.log(
  'ML compression bench (CPU, 2 cores; spec expectation: cold start 10-30 s, ~1 GB, 50-200 ms per request)',
);
console.table(rows);
