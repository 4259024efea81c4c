import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CompressFn } from '../../src/cli/compress-input.js';
import { type CompressRunOptions, runCompress } from '../../src/cli/compress-run.js';
import { resolveConfig } from '../../src/config/index.js';
import { contentHash } from '../../src/engine/hash.js';
import { formatMarker } from '../../src/engine/markers.js';
import { tokenizerFor } from '../../src/engine/tokens.js';
import type { ChatMessage } from '../../src/engine/types.js';
import { ROOT, runCli, tempHome } from './helpers.js';

const SAMPLES = join(ROOT, 'fixtures', 'samples');
const home = tempHome('svc-run-');
afterAll(home.cleanup);

/** Stands in for the engine: cuts every long tool output to a prefix and a marker. */
const cutLongToolOutputs: CompressFn = (messages, options) => {
  const ccrEntries = new Map<string, string>();
  const changed = new Set<number>();
  const out = messages.map((m, i): ChatMessage => {
    if (m.role !== 'tool' || typeof m.content !== 'string' || m.content.length < 1_000) return m;
    const hash = contentHash(m.content);
    ccrEntries.set(hash, m.content);
    changed.add(i);
    const lines = m.content.split('\n').length;
    return {
      ...m,
      content: `${m.content.slice(0, 80)}\n${formatMarker({ hash, omitted: lines, unit: 'lines' })}`,
    };
  });
  const tokenizer = tokenizerFor(options.model);
  const before = tokenizer.countMessages(messages);
  const after = tokenizer.countMessages(out);
  return {
    result: {
      messages: out,
      tokens_before: before,
      tokens_after: after,
      tokens_saved: before - after,
      compression_ratio: after / before,
      transforms_applied: [...changed].map(() => 'fake:cut'),
      ccr_hashes: [...ccrEntries.keys()],
    },
    ccrEntries,
    messageOrigin: out.map((_, i) => i),
    changed,
  };
};

let n = 0;
async function run(
  files: string[],
  over: Partial<CompressRunOptions> = {},
  env: Record<string, string> = {},
) {
  const output = join(home.dir, `out-${n++}.json`);
  let stderr = '';
  const code = await runCompress({
    files,
    config: resolveConfig({ env: { SERVICE_HOME: join(home.dir, '.svc'), ...env } }),
    model: undefined,
    inputFormat: 'auto',
    output,
    messagesOnly: false,
    pretty: false,
    summary: false,
    failUnder: undefined,
    record: false,
    compress: cutLongToolOutputs,
    stderr: (text) => {
      stderr += text;
    },
    ...over,
  });
  let stdout: string | undefined;
  try {
    stdout = readFileSync(output, 'utf8');
  } catch {
    stdout = undefined;
  }
  return { code, stdout, stderr };
}

describe('svc compress with an engine that removes content', { timeout: 60_000 }, () => {
  it('writes every removed original to the file CCR store, and svc retrieve prints it back', async () => {
    const file = join(SAMPLES, 'logs.chat.json');
    const input = JSON.parse(readFileSync(file, 'utf8'));
    const res = await run([file]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const result = JSON.parse(res.stdout!);
    expect(result.ccr_hashes.length).toBe(2);
    expect(result.tokens_saved).toBeGreaterThan(1_000);
    for (const hash of result.ccr_hashes as string[]) {
      expect(JSON.stringify(result.messages)).toContain(`hash=${hash}`);
      const original = input.messages.find(
        (m: ChatMessage) => m.content && contentHash(String(m.content)) === hash,
      );
      const stored = readFileSync(join(home.dir, '.svc', 'ccr', hash.slice(0, 2), hash), 'utf8');
      expect(stored).toBe(original.content);
    }
    const hash = result.ccr_hashes[0] as string;
    const retrieved = await runCli(['retrieve', hash], home.dir);
    expect(retrieved.code).toBe(0);
    expect(retrieved.stdout).toBe(
      readFileSync(join(home.dir, '.svc', 'ccr', hash.slice(0, 2), hash), 'utf8'),
    );
  });

  it('splices the compressed tool results back into a messages-format input', async () => {
    const file = join(SAMPLES, 'grep.messages.json');
    const input = JSON.parse(readFileSync(file, 'utf8'));
    const res = await run([file]);
    expect(res.code).toBe(0);
    const result = JSON.parse(res.stdout!);
    expect(result.messages).toHaveLength(input.messages.length);
    const toolResult = result.messages[2].content[0];
    expect(toolResult.type).toBe('tool_result');
    expect(toolResult.tool_use_id).toBe(input.messages[2].content[0].tool_use_id);
    expect(toolResult.content).toMatch(
      /\[svc: \d+ lines omitted; retrieve with svc_retrieve hash=[0-9a-f]{24}\]$/,
    );
    expect(result.messages[1]).toEqual(input.messages[1]);
    expect(result.messages.at(-1)).toEqual(input.messages.at(-1));
  });

  it('prints the input uncompressed, with one warning, when the CCR store cannot be written', async () => {
    const blocker = join(home.dir, 'not-a-folder');
    writeFileSync(blocker, 'x');
    const file = join(SAMPLES, 'logs.chat.json');
    const input = JSON.parse(readFileSync(file, 'utf8'));
    const res = await run([file], {}, { SERVICE_CCR_PATH: join(blocker, 'ccr') });
    expect(res.code).toBe(0);
    const result = JSON.parse(res.stdout!);
    expect(result.messages).toEqual(input.messages);
    expect(result).toMatchObject({
      tokens_saved: 0,
      compression_ratio: 1,
      transforms_applied: [],
      ccr_hashes: [],
    });
    expect(result.tokens_after).toBe(result.tokens_before);
    const lines = res.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^svc compress: warning: .*logs\.chat\.json: cannot write the CCR store at .*; printing the input uncompressed/,
    );
  });

  it('exits 3 with one line and writes no output when the engine throws', async () => {
    const res = await run([join(SAMPLES, 'logs.chat.json')], {
      compress: () => {
        throw new Error('boom in a transform');
      },
    });
    expect(res.code).toBe(3);
    expect(res.stdout).toBeUndefined();
    expect(res.stderr).toBe(
      `svc compress: error: ${join(SAMPLES, 'logs.chat.json')}: compression failed: boom in a transform\n`,
    );
  });

  it('turns an unexpected error (a malformed engine output) into one line and exit 3', async () => {
    const file = join(SAMPLES, 'logs.chat.json');
    const res = await run([file], { compress: () => ({}) as ReturnType<CompressFn> });
    expect(res.code).toBe(3);
    expect(res.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(res.stderr).toMatch(/^svc compress: error: .*logs\.chat\.json: internal error: /);
  });

  it('--fail-under compares the total savings over all files', async () => {
    const files = [join(SAMPLES, 'logs.chat.json'), join(SAMPLES, 'prose.chat.json')];
    const pass = await run(files, { failUnder: 10, summary: true });
    expect(pass.code).toBe(0);
    expect(pass.stderr).toContain('total: 2 files');
    expect(pass.stderr).toContain('fake:cut x');
    const lines = pass
      .stdout!.trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    const before = lines.reduce((s, r) => s + r.tokens_before, 0);
    const saved = lines.reduce((s, r) => s + r.tokens_saved, 0);
    const pct = (100 * saved) / before;
    const fail = await run(files, { failUnder: Math.ceil(pct) });
    expect(fail.code).toBe(1);
    expect(fail.stderr).toContain(
      `total savings ${pct.toFixed(1)}% are below --fail-under ${Math.ceil(pct)}%`,
    );
  });
});
