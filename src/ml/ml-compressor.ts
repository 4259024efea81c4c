import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import { contentHash } from '../engine/hash.js';
import { formatMarker } from '../engine/markers.js';
import { contentText } from '../engine/tokens.js';
import type { ChatMessage } from '../engine/types.js';
import { PACKAGE_ROOT } from '../version.js';
import { detectKind, longStrings, mapLongStrings } from './content-kind.js';
import type { WorkerReply, WorkerRequest } from './protocol.js';
import { joinWords, questionWordSet, selectWords, splitWords } from './words.js';

export interface MlCompressorOptions {
  modelDir: string;
  device: 'auto' | 'cuda' | 'cpu' | 'mps';
  /** Share of words to keep, in (0, 1]. */
  rate: number;
  /** Time budget per request for inference, ms. */
  timeoutMs: number;
  /** Pieces shorter than this (chars) are left alone. Default 1200 (~300 tokens). */
  minChars?: number;
  /** JSON string values shorter than this are left alone. Default 400. */
  minJsonStringChars?: number;
  /** Windows per inference batch. Default 8. */
  maxBatch?: number;
  /** Memoized pieces. Default 20 000. */
  memoMax?: number;
}

/** What one ML pass did to a conversation. */
export interface MlPassOutput {
  messages: ChatMessage[];
  ccrEntries: Map<string, string>;
  changed: Set<number>;
  transforms: string[];
  /** Inference did not finish within the budget; those pieces went unchanged (and stay so). */
  timedOut: boolean;
}

export interface MlCompressor {
  /** Execution provider that loaded the model (`cpu`, `cuda`, `coreml`). */
  readonly provider: string;
  /** Providers that were tried and failed before it (for the fallback warning). */
  readonly fellBack: string[];
  readonly loadMs: number;
  /** Compresses eligible pieces of `messages`; never changes system messages or the latest user message. */
  compress(messages: ChatMessage[]): Promise<MlPassOutput>;
  close(): Promise<void>;
}

interface Slot {
  message: number;
  /** -1 for string content, else index of a text part. */
  part: number;
  text: string;
  key: string;
  kind: 'json' | 'text';
  /** Words of each unit sent to the model (one unit for text; one per long string for JSON). */
  units: string[];
  question: Set<string>;
}

function workerPath(): URL {
  // Built, the worker is beside this module (dist/src/ml). Under vitest this module runs from
  // src/*.ts, and in the bundle of `svc compress` from dist/src/cli-bundle: the worker is the
  // built one in dist/src/ml.
  const beside = new URL('./worker.js', import.meta.url);
  if (!fileURLToPath(import.meta.url).endsWith('.ts') && existsSync(beside)) return beside;
  const built = join(PACKAGE_ROOT, 'dist', 'src', 'ml', 'worker.js');
  if (!existsSync(built)) throw new Error(`ML worker not built: ${built} (run npm run build)`);
  return new URL(`file://${built}`);
}

/**
 * Starts the worker and loads the model. Rejects with the reason when the
 * runtime or the model cannot be loaded (the caller runs without ML then).
 */
export async function startMlCompressor(options: MlCompressorOptions): Promise<MlCompressor> {
  const minChars = options.minChars ?? 1200;
  const minJsonChars = options.minJsonStringChars ?? 400;
  const memo = new LRUCache<string, string>({ max: options.memoMax ?? 20_000 });
  const worker = new Worker(workerPath(), {
    workerData: { modelDir: options.modelDir, device: options.device, maxBatch: options.maxBatch ?? 8 },
  });
  worker.unref();
  const pending = new Map<number, { resolve: (p: number[][]) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  const ready = await new Promise<Extract<WorkerReply, { type: 'ready' }>>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (msg: WorkerReply) => {
      if (msg.type === 'ready') resolve(msg);
      else reject(new Error(msg.type === 'failed' ? msg.message : 'ML worker: unexpected first message'));
    });
  }).catch(async (err: unknown) => {
    await worker.terminate();
    throw err;
  });
  worker.on('message', (msg: WorkerReply) => {
    if (msg.type !== 'result' && msg.type !== 'error') return;
    const waiter = pending.get(msg.id);
    pending.delete(msg.id);
    if (msg.type === 'result') waiter?.resolve(msg.probs);
    else waiter?.reject(new Error(msg.message));
  });
  worker.on('error', (err) => {
    for (const w of pending.values()) w.reject(err);
    pending.clear();
  });

  const classify = (pieces: string[][]) =>
    new Promise<number[][]>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, pieces } satisfies WorkerRequest);
    });

  const compressWords = (text: string, probs: number[], question: Set<string>) => {
    const words = splitWords(text);
    const kept = selectWords(words, probs, options.rate, question);
    return { text: joinWords(text, words, kept), omitted: words.length - kept.length };
  };

  function collect(messages: ChatMessage[]): Slot[] {
    const slots: Slot[] = [];
    let question = new Set<string>();
    messages.forEach((m, i) => {
      // Never a user message: each one is the latest when first sent, and compressing it once it no
      // longer is would change an already-sent message on a later turn (principle 2).
      const eligible = m.role !== 'system' && m.role !== 'developer' && m.role !== 'user';
      const texts: Array<[number, string]> =
        typeof m.content === 'string'
          ? [[-1, m.content]]
          : Array.isArray(m.content)
            ? m.content.flatMap(
                (p, k): Array<[number, string]> =>
                  p.type === 'text' && typeof p.text === 'string' ? [[k, p.text]] : [],
              )
            : [];
      for (const [part, text] of eligible ? texts : []) {
        if (text.length < minChars) continue;
        const kind = detectKind(text);
        if (kind === 'code') continue;
        const units = kind === 'json' ? longStrings(JSON.parse(text), minJsonChars) : [text];
        if (units.length === 0) continue;
        // Causal: the question is the latest user message *before* this piece (principle 2).
        slots.push({
          message: i,
          part,
          text,
          kind,
          units,
          question,
          key: `${contentHash(text)}:${options.rate}`,
        });
      }
      if (m.role === 'user') question = questionWordSet(contentText(m.content));
    });
    return slots;
  }

  function render(slot: Slot, probs: number[][]): string {
    if (slot.kind === 'text') {
      const { text, omitted } = compressWords(slot.text, probs[0] ?? [], slot.question);
      if (omitted === 0) return slot.text;
      const out = `${text}\n${formatMarker({ hash: contentHash(slot.text), omitted, unit: 'words' })}`;
      return out.length < slot.text.length * 0.9 ? out : slot.text;
    }
    let k = 0;
    let omitted = 0;
    const value = mapLongStrings(JSON.parse(slot.text), minJsonChars, (s) => {
      const r = compressWords(s, probs[k++] ?? [], slot.question);
      omitted += r.omitted;
      return r.text;
    });
    if (omitted === 0) return slot.text;
    const json = slot.text.includes('\n') ? JSON.stringify(value, null, 2) : JSON.stringify(value);
    const out = `${json}\n${formatMarker({ hash: contentHash(slot.text), omitted, unit: 'words' })}`;
    return out.length < slot.text.length * 0.9 ? out : slot.text;
  }

  return {
    provider: ready.provider,
    fellBack: ready.fellBack,
    loadMs: ready.loadMs,
    async compress(messages) {
      const slots = collect(messages);
      const todo = slots.filter((s) => !memo.has(s.key));
      let timedOut = false;
      if (todo.length > 0) {
        const pieces = todo.flatMap((s) => s.units.map((u) => splitWords(u).map((w) => w.text)));
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<undefined>((resolve) => {
          timer = setTimeout(() => resolve(undefined), options.timeoutMs);
        });
        const probs = await Promise.race([classify(pieces), timeout]).finally(() => clearTimeout(timer));
        if (probs === undefined) timedOut = true;
        let offset = 0;
        for (const slot of todo) {
          const mine = probs?.slice(offset, offset + slot.units.length);
          offset += slot.units.length;
          // First forwarded form wins: a time-out memoizes the original, so later turns stay byte-identical.
          memo.set(slot.key, mine ? render(slot, mine) : slot.text);
        }
      }
      const out = messages.slice();
      const ccrEntries = new Map<string, string>();
      const changed = new Set<number>();
      let before = 0;
      let after = 0;
      for (const slot of slots) {
        const forwarded = memo.get(slot.key) ?? slot.text;
        if (forwarded === slot.text) continue;
        ccrEntries.set(contentHash(slot.text), slot.text);
        before += slot.text.length;
        after += forwarded.length;
        const msg = { ...out[slot.message]! };
        if (slot.part < 0) msg.content = forwarded;
        else
          msg.content = (msg.content as Array<{ type: string }>).map((p, k) =>
            k === slot.part ? { ...p, text: forwarded } : p,
          );
        out[slot.message] = msg;
        changed.add(slot.message);
      }
      const transforms =
        changed.size > 0 ? [`mlcompress:${changed.size}:${(after / before).toFixed(2)}`] : [];
      return { messages: out, ccrEntries, changed, transforms, timedOut };
    },
    async close() {
      for (const w of pending.values()) w.reject(new Error('ML compressor closed'));
      pending.clear();
      await worker.terminate();
    },
  };
}
