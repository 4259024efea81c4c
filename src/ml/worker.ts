/**
 * The ML-compression worker thread: loads the tokenizer and the ONNX token
 * classifier once, then answers `classify` requests with a keep-probability
 * per word. Runs off the event loop so inference never blocks the proxy.
 */
import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import type { WorkerReply, WorkerRequest } from './protocol.js';
import {
  type HfTokenizersModule,
  importOptional,
  type OrtModule,
  type OrtSession,
  type OrtTensor,
} from './runtime-types.js';

interface InitData {
  modelDir: string;
  device: 'auto' | 'cuda' | 'cpu' | 'mps';
  maxBatch: number;
}

const MAX_TOKENS = 512;

/** True when onnxruntime-node ships its CUDA provider library (it does not with ONNXRUNTIME_NODE_INSTALL=skip). */
function cudaLibraryPresent(): boolean {
  try {
    const entry = fileURLToPath(import.meta.resolve('onnxruntime-node'));
    const root = entry.slice(0, entry.lastIndexOf('/dist/'));
    const dirs = readdirSync(join(root, 'bin')).map((napi) =>
      join(root, 'bin', napi, process.platform, process.arch),
    );
    return dirs.some((d) => existsSync(join(d, 'libonnxruntime_providers_cuda.so')));
  } catch {
    return false;
  }
}

/** Execution providers to try, in order. `auto` tries CUDA only where its library is installed. */
function providersFor(device: InitData['device']): string[][] {
  if (device === 'cpu') return [['cpu']];
  if (device === 'cuda') return [['cuda', 'cpu'], ['cpu']];
  if (device === 'mps') return process.platform === 'darwin' ? [['coreml', 'cpu'], ['cpu']] : [['cpu']];
  return cudaLibraryPresent() ? [['cuda', 'cpu'], ['cpu']] : [['cpu']];
}

async function load(data: InitData) {
  const ort = await importOptional<OrtModule>('onnxruntime-node');
  const { Tokenizer } = await importOptional<HfTokenizersModule>('@huggingface/tokenizers');
  const tokenizerJson = JSON.parse(await readFile(join(data.modelDir, 'tokenizer.json'), 'utf8'));
  const config = JSON.parse(await readFile(join(data.modelDir, 'config.json'), 'utf8')) as {
    label2id?: Record<string, number>;
  };
  const tokenizer = new Tokenizer(tokenizerJson, {});
  const modelBytes = await readFile(join(data.modelDir, 'model.onnx'));
  let session: OrtSession | undefined;
  let provider = 'cpu';
  const errors: string[] = [];
  for (const eps of providersFor(data.device)) {
    try {
      session = await ort.InferenceSession.create(modelBytes, {
        executionProviders: eps,
        logSeverityLevel: 3,
      });
      provider = eps[0]!;
      break;
    } catch (err) {
      errors.push(`${eps[0]}: ${String((err as Error).message ?? err).split('\n')[0]}`);
    }
  }
  if (!session) throw new Error(`no execution provider could load the model (${errors.join('; ')})`);
  const vocab = (tokenizerJson.model?.vocab ?? {}) as Record<string, number>;
  const cls = BigInt(vocab['[CLS]'] ?? vocab['<s>'] ?? 0);
  const sep = BigInt(vocab['[SEP]'] ?? vocab['</s>'] ?? 0);
  const pad = BigInt(vocab['[PAD]'] ?? vocab['<pad>'] ?? 0);
  const keepLabel = config.label2id?.keep ?? config.label2id?.preserve ?? 1;
  return { ort, tokenizer, session, provider, fellBack: errors, cls, sep, pad, keepLabel };
}

type Loaded = Awaited<ReturnType<typeof load>>;

/** Token ids per word, and windows of at most 510 tokens that never split a word. */
function windows(m: Loaded, words: string[]) {
  const ids = words.map((w) =>
    m.tokenizer
      .encode(w, { add_special_tokens: false })
      .ids.map(BigInt)
      .slice(0, MAX_TOKENS - 2),
  );
  const out: Array<{ firstWord: number; ids: bigint[][] }> = [];
  let current: { firstWord: number; ids: bigint[][] } = { firstWord: 0, ids: [] };
  let length = 0;
  ids.forEach((wordIds, i) => {
    if (length + wordIds.length > MAX_TOKENS - 2 && current.ids.length > 0) {
      out.push(current);
      current = { firstWord: i, ids: [] };
      length = 0;
    }
    current.ids.push(wordIds);
    length += wordIds.length;
  });
  if (current.ids.length > 0) out.push(current);
  return out;
}

async function classify(m: Loaded, pieces: string[][], maxBatch: number): Promise<number[][]> {
  const probs = pieces.map((words) => new Array<number>(words.length).fill(0));
  const jobs = pieces.flatMap((words, piece) => windows(m, words).map((w) => ({ piece, ...w })));
  for (let b = 0; b < jobs.length; b += maxBatch) {
    const batch = jobs.slice(b, b + maxBatch);
    const seq = Math.max(...batch.map((j) => j.ids.reduce((n, w) => n + w.length, 0))) + 2;
    const input = new BigInt64Array(batch.length * seq).fill(m.pad);
    const mask = new BigInt64Array(batch.length * seq);
    const owner: Int32Array[] = [];
    batch.forEach((job, row) => {
      const base = row * seq;
      const map = new Int32Array(seq).fill(-1);
      input[base] = m.cls;
      let t = 1;
      job.ids.forEach((wordIds, k) => {
        for (const id of wordIds) {
          input[base + t] = id;
          map[t] = job.firstWord + k;
          t += 1;
        }
      });
      input[base + t] = m.sep;
      for (let i = 0; i <= t; i++) mask[base + i] = 1n;
      owner.push(map);
    });
    const feeds: Record<string, OrtTensor> = {
      input_ids: new m.ort.Tensor('int64', input, [batch.length, seq]),
      attention_mask: new m.ort.Tensor('int64', mask, [batch.length, seq]),
    };
    if (m.session.inputNames.includes('token_type_ids')) {
      feeds.token_type_ids = new m.ort.Tensor('int64', new BigInt64Array(batch.length * seq), [
        batch.length,
        seq,
      ]);
    }
    const out = await m.session.run(feeds);
    const logits = out[m.session.outputNames[0]!]!.data as Float32Array;
    const labels = logits.length / (batch.length * seq);
    batch.forEach((job, row) => {
      const sums = new Map<number, { total: number; n: number }>();
      const map = owner[row]!;
      for (let t = 0; t < seq; t++) {
        const word = map[t]!;
        if (word < 0) continue;
        const off = (row * seq + t) * labels;
        let max = Number.NEGATIVE_INFINITY;
        for (let l = 0; l < labels; l++) max = Math.max(max, logits[off + l]!);
        let denom = 0;
        for (let l = 0; l < labels; l++) denom += Math.exp(logits[off + l]! - max);
        const p = Math.exp(logits[off + m.keepLabel]! - max) / denom;
        const s = sums.get(word) ?? { total: 0, n: 0 };
        s.total += p;
        s.n += 1;
        sums.set(word, s);
      }
      const target = probs[job.piece]!;
      for (const [word, s] of sums) target[word] = s.total / s.n;
    });
  }
  return probs;
}

const port = parentPort;
if (!port) throw new Error('worker.ts must run in a worker thread');
const init = workerData as InitData;
const started = performance.now();
const loading = load(init);
loading.then(
  (m) =>
    port.postMessage({
      type: 'ready',
      provider: m.provider,
      fellBack: m.fellBack,
      loadMs: performance.now() - started,
    } satisfies WorkerReply),
  (err: unknown) =>
    port.postMessage({
      type: 'failed',
      message: String((err as Error)?.message ?? err),
    } satisfies WorkerReply),
);
port.on('message', async (req: WorkerRequest) => {
  try {
    const m = await loading;
    const probs = await classify(m, req.pieces, init.maxBatch);
    port.postMessage({ type: 'result', id: req.id, probs } satisfies WorkerReply);
  } catch (err) {
    port.postMessage({
      type: 'error',
      id: req.id,
      message: String((err as Error)?.message ?? err),
    } satisfies WorkerReply);
  }
});
