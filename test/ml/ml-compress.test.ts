import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMarkers } from '../../src/engine/markers.js';
import type { ChatMessage } from '../../src/engine/types.js';
import { ML_INSTALL_HINT, mlEnabledLine, mlPreflight } from '../../src/ml/detect.js';
import { type MlCompressor, startMlCompressor } from '../../src/ml/ml-compressor.js';
import { splitWords } from '../../src/ml/words.js';

let dir: string;
let modelDir: string;
let ml: MlCompressor;

const FILLER =
  'the service answered slowly because the queue was full and the workers were waiting for the database to respond';

function prose(sentences: number): string {
  return Array.from({ length: sentences }, (_, i) => `${FILLER} during window ${i}.`).join(' ');
}

function convo(toolText: string, question = 'what happened?'): ChatMessage[] {
  return [
    { role: 'system', content: `system prompt ${prose(20)}` },
    { role: 'user', content: question },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'logs', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'c1', content: toolText },
    { role: 'user', content: prose(15) },
  ];
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-ml-'));
  modelDir = join(dir, 'model');
  execFileSync(process.execPath, ['scripts/make-ml-model.js', '--kind', 'tiny', '--out', modelDir]);
  ml = await startMlCompressor({ modelDir, device: 'auto', rate: 0.3, timeoutMs: 10_000 });
});

afterAll(async () => {
  await ml?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ML compression with the tiny generated classifier', () => {
  it('keeps about the target rate of words in prose', async () => {
    const text = prose(40);
    const out = await ml.compress(convo(text));
    const compressed = out.messages[3]!.content as string;
    const body = compressed.slice(0, compressed.lastIndexOf('\n['));
    const ratio = splitWords(body).length / splitWords(text).length;
    expect(ratio).toBeGreaterThan(0.2);
    expect(ratio).toBeLessThan(0.4);
    expect(out.transforms[0]).toMatch(/^mlcompress:1:0\.\d\d$/);
  });

  it('always keeps digits, identifiers, paths and the words of the question before the output', async () => {
    const text = `${prose(10)} error in /var/log/app.log at line 4412 in parse_config for userId abc and deadbeef42 ${prose(10)} mentioning zebra`;
    const out = await ml.compress(convo(text, 'Is the zebra config broken?'));
    const compressed = out.messages[3]!.content as string;
    for (const word of ['/var/log/app.log', '4412', 'parse_config', 'userId', 'deadbeef42', 'zebra']) {
      expect(compressed).toContain(word);
    }
  });

  it('stores the original in CCR and the marker names its hash', async () => {
    const text = prose(30);
    const out = await ml.compress(convo(text));
    const markers = parseMarkers(out.messages[3]!.content as string);
    expect(markers).toHaveLength(1);
    expect(markers[0]!.unit).toBe('words');
    expect(out.ccrEntries.get(markers[0]!.hash)).toBe(text);
  });

  it('changes only long JSON string values, never keys or structure', async () => {
    const doc = {
      id: 'r-1',
      items: [
        { name: 'a', note: prose(12) },
        { name: 'b', note: 'short' },
      ],
      count: 2,
    };
    const text = JSON.stringify(doc, null, 2);
    const out = await ml.compress(convo(text));
    const compressed = out.messages[3]!.content as string;
    const parsed = JSON.parse(compressed.slice(0, compressed.lastIndexOf('\n['))) as typeof doc;
    expect(Object.keys(parsed)).toEqual(Object.keys(doc));
    expect(parsed.id).toBe('r-1');
    expect(parsed.count).toBe(2);
    expect(parsed.items[1]).toEqual(doc.items[1]);
    expect(parsed.items[0]!.name).toBe('a');
    expect(parsed.items[0]!.note.length).toBeLessThan(doc.items[0]!.note.length);
  });

  it('leaves code, system messages and the latest user message alone', async () => {
    const code = Array.from({ length: 60 }, (_, i) => `function f${i}(x) {\n  return x + ${i};\n}`).join(
      '\n',
    );
    const messages = convo(code);
    const out = await ml.compress(messages);
    expect(out.messages[3]).toBe(messages[3]);
    expect(out.messages[0]).toBe(messages[0]);
    expect(out.messages[4]).toBe(messages[4]);
  });

  it('never compresses a user message, not even once a later user message follows it', async () => {
    const messages: ChatMessage[] = [
      ...convo(prose(5)),
      { role: 'assistant', content: 'The queue was full.' },
      { role: 'user', content: 'and now?' },
    ];
    const out = await ml.compress(messages);
    expect(out.messages[4]).toBe(messages[4]);
    expect(out.messages[6]).toBe(messages[6]);
  });

  it('honours the time budget and keeps the first forwarded form on later turns', async () => {
    const slow = await startMlCompressor({ modelDir, device: 'cpu', rate: 0.3, timeoutMs: 1 });
    try {
      const text = prose(400);
      const first = await slow.compress(convo(text));
      expect(first.timedOut).toBe(true);
      expect(first.messages[3]!.content).toBe(text);
      await new Promise((r) => setTimeout(r, 300));
      const again = await slow.compress(convo(text));
      expect(again.messages[3]!.content).toBe(text);
    } finally {
      await slow.close();
    }
  });

  it('is memoized: the same content compresses to the same bytes', async () => {
    const text = prose(25);
    const a = await ml.compress(convo(text));
    const b = await ml.compress(convo(text, 'a different question about zebras?'));
    expect(b.messages[3]!.content).toBe(a.messages[3]!.content);
  });

  it('makes no network access at any point', () => {
    const child = spawnSync(
      process.execPath,
      ['--require', './test/ml/no-network-preload.cjs', 'test/ml/run-ml-child.mjs', modelDir],
      {
        encoding: 'utf8',
      },
    );
    expect(child.stderr).not.toContain('NETWORK ATTEMPT');
    expect(child.status).toBe(0);
    expect(JSON.parse(child.stdout).changed).toEqual([1]);
  });
});

describe('ML start-up lines (spec 1.9)', () => {
  it('hints when installed but not enabled', () => {
    expect(
      mlPreflight({ enabled: false, device: 'auto', rate: 0.3, modelDir, installed: true })?.text,
    ).toMatch(/--mlcompress/);
    expect(
      mlPreflight({ enabled: false, device: 'auto', rate: 0.3, modelDir, installed: false }),
    ).toBeUndefined();
  });

  it('warns with the install command when enabled but the runtime is missing', () => {
    const line = mlPreflight({
      enabled: true,
      device: 'auto',
      rate: 0.3,
      modelDir: '/nowhere/model',
      installed: false,
    });
    expect(line?.level).toBe('warn');
    expect(line?.text).toContain(ML_INSTALL_HINT);
    expect(line?.text).toContain('/nowhere/model');
  });

  it('warns with the expected path when the model is missing', () => {
    const line = mlPreflight({
      enabled: true,
      device: 'auto',
      rate: 0.3,
      modelDir: join(dir, 'empty'),
      installed: true,
    });
    expect(line?.level).toBe('warn');
    expect(line?.text).toContain(join(dir, 'empty'));
    expect(line?.text).toContain('model.onnx');
  });

  it('is silent before loading when everything is in place, then names device and rate', () => {
    expect(
      mlPreflight({ enabled: true, device: 'auto', rate: 0.3, modelDir, installed: true }),
    ).toBeUndefined();
    expect(mlEnabledLine('cpu', 0.3).text).toBe('ML compression: enabled (device=cpu, rate=0.3)');
  });

  it('a model folder that cannot load rejects start with the reason', async () => {
    await expect(
      startMlCompressor({ modelDir: join(dir, 'empty'), device: 'cpu', rate: 0.3, timeoutMs: 100 }),
    ).rejects.toThrow(/ENOENT|no such file/);
  });
});
