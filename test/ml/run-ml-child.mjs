// Child process for the no-network test: loads the ML compressor from dist and
// compresses one conversation; prints the pass's summary as JSON.
import { startMlCompressor } from '../../dist/src/ml/ml-compressor.js';

const [modelDir] = process.argv.slice(2);
const prose = Array.from(
  { length: 30 },
  (_, i) => `The worker ${i} was slow because the queue of the service was full at that time.`,
).join(' ');
const c = await startMlCompressor({ modelDir, device: 'auto', rate: 0.3, timeoutMs: 10_000 });
const out = await c.compress([
  { role: 'user', content: 'why slow?' },
  { role: 'tool', tool_call_id: 'x', content: prose },
  { role: 'user', content: 'ok' },
]);
await c.close();
console.log(JSON.stringify({ changed: [...out.changed], transforms: out.transforms }));
