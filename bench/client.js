// Client-side overhead of the Anthropic adapter: building the chat view of a
// request and splicing a compressed result back, for a small and a large
// conversation. Runs against dist/ (build first: npm run build).
// Usage: node bench/client.js
import { anthropicView } from '../packages/client/dist/convert-anthropic.js';
import { spliceResult, viewMessages } from '../packages/client/dist/splice.js';

function conversation(turns, outputChars) {
  const messages = [];
  for (let t = 0; t < turns; t++) {
    messages.push({ role: 'user', content: [{ type: 'text', text: `step ${t}: run the next command` }] });
    messages.push({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'thinking about it', signature: 'sig'.repeat(20) },
        { type: 'tool_use', id: `toolu_${t}`, name: 'bash', input: { cmd: `ls ${t}` } },
      ],
    });
    messages.push({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: `toolu_${t}`,
          content: 'x'.repeat(outputChars),
          cache_control: { type: 'ephemeral' },
        },
      ],
    });
  }
  return { model: 'claude-test', max_tokens: 1024, system: 'You are an agent.', messages };
}

function squeezeTools(messages) {
  return messages.map((m) => (m.role === 'tool' ? { ...m, content: `squeezed(${m.content.length})` } : m));
}

function measure(name, request, runs) {
  const times = [];
  const warmup = Math.ceil(runs / 4);
  for (let i = 0; i < runs + warmup; i++) {
    const t0 = performance.now();
    const view = anthropicView(request);
    const out = squeezeTools(viewMessages(view));
    const spliced = spliceResult(request, view, out);
    if (i >= warmup) times.push(performance.now() - t0);
    if (!spliced) throw new Error('splice failed');
  }
  times.sort((a, b) => a - b);
  const p = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(3);
  const chars = JSON.stringify(request).length;
  return {
    case: name,
    messages: request.messages.length,
    'request KB': Math.round(chars / 1024),
    'p50 ms': p(0.5),
    'p99 ms': p(0.99),
  };
}

const rows = [
  measure('~1k tokens (3 turns)', conversation(3, 1_000), 2_000),
  measure('~100k tokens (100 turns)', conversation(100, 4_000), 200),
  measure('1000 turns', conversation(1_000, 400), 100),
];
console.log('client adapter overhead (view + splice, Anthropic format; excludes the HTTP call)');
console.table(rows);
