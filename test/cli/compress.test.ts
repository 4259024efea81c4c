import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, runCli, tempHome } from './helpers.js';

const SAMPLES = join(ROOT, 'fixtures', 'samples');
const SESSION = join(SAMPLES, 'agent-session.json');
const SESSION_MESSAGES = join(SAMPLES, 'agent-session.messages.json');
const RESULT_KEYS = [
  'messages',
  'tokens_before',
  'tokens_after',
  'tokens_saved',
  'compression_ratio',
  'transforms_applied',
  'ccr_hashes',
];
const home = tempHome();
afterAll(home.cleanup);
const cli = (args: string[], stdin?: string) =>
  runCli(['compress', ...args], home.dir, stdin === undefined ? {} : { stdin });

interface Result {
  messages: Array<Record<string, unknown>>;
  tokens_before: number;
  tokens_after: number;
  tokens_saved: number;
  compression_ratio: number;
  transforms_applied: string[];
  ccr_hashes: string[];
}

function expectResultShape(result: Result) {
  expect(Object.keys(result)).toEqual(RESULT_KEYS);
  expect(Number.isInteger(result.tokens_before) && result.tokens_before > 0).toBe(true);
  expect(result.tokens_saved).toBe(result.tokens_before - result.tokens_after);
  expect(result.compression_ratio).toBeCloseTo(result.tokens_after / result.tokens_before, 3);
  expect(Array.isArray(result.transforms_applied) && Array.isArray(result.ccr_hashes)).toBe(true);
}

describe('svc compress', { timeout: 60_000 }, () => {
  it('compresses a FILE and prints the compression result JSON', async () => {
    const run = await cli([SESSION]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as Result;
    expectResultShape(result);
    const input = JSON.parse(readFileSync(SESSION, 'utf8'));
    expect(result.tokens_before).toBeGreaterThan(10_000);
    expect(result.messages.at(-1)).toEqual(input.messages.at(-1));
    expect(result.messages[0]).toEqual(input.messages[0]);
  });

  it('reads stdin when no FILE is given, with the same result as the file', async () => {
    const text = readFileSync(SESSION, 'utf8');
    const [piped, fromFile] = await Promise.all([cli([], text), cli([SESSION])]);
    expect(piped.code).toBe(0);
    expect(piped.stdout).toBe(fromFile.stdout);
    const dash = await cli(['-'], text);
    expect(dash.stdout).toBe(fromFile.stdout);
  });

  it('keeps a messages-format input in the messages format', async () => {
    const input = JSON.parse(readFileSync(SESSION_MESSAGES, 'utf8'));
    const run = await cli([SESSION_MESSAGES]);
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as Result;
    expectResultShape(result);
    const roles = new Set(result.messages.map((m) => m.role));
    expect([...roles].sort()).toEqual(['assistant', 'user']);
    const blocks = result.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
    const uses = blocks.filter((b) => b.type === 'tool_use').map((b) => b.id);
    const results = blocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id);
    expect(uses.length).toBeGreaterThan(0);
    expect(results).toEqual(uses);
    expect(blocks.find((b) => b.type === 'thinking')).toEqual(input.messages[1].content[0]);
    expect(result.messages.at(-1)).toEqual(input.messages.at(-1));
    expect(result.messages[0]).toEqual(input.messages[0]);
  });

  it('prints the --summary table on stderr and the JSON on stdout', async () => {
    const run = await cli([SESSION, '--summary']);
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as Result;
    for (const head of ['before', 'after', 'saved', 'ratio', 'transforms'])
      expect(run.stderr).toContain(head);
    expect(run.stderr).toContain(result.tokens_before.toLocaleString('en-US'));
    expect(run.stderr).toContain(result.compression_ratio.toFixed(3));
    expect(run.stderr).toContain('gpt-4o');
  });

  it('writes --output atomically: the whole JSON, nothing on stdout, no temporary file left', async () => {
    const dir = join(home.dir, 'out-ok');
    const out = join(dir, 'result.json');
    await import('node:fs/promises').then((fs) => fs.mkdir(dir));
    writeFileSync(out, 'old content');
    const run = await cli([SESSION, '--output', out]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('');
    expectResultShape(JSON.parse(readFileSync(out, 'utf8')));
    expect(readdirSync(dir)).toEqual(['result.json']);
  });

  it('leaves an existing --output file untouched when the input is bad', async () => {
    const dir = join(home.dir, 'out-bad');
    const out = join(dir, 'result.json');
    await import('node:fs/promises').then((fs) => fs.mkdir(dir));
    writeFileSync(out, 'previous result');
    const run = await cli(['--output', out], '{"messages": [');
    expect(run.code).toBe(2);
    expect(readFileSync(out, 'utf8')).toBe('previous result');
    expect(readdirSync(dir)).toEqual(['result.json']);
  });

  it('--messages-only prints just the messages array', async () => {
    const [only, full] = await Promise.all([cli([SESSION, '--messages-only']), cli([SESSION])]);
    expect(only.code).toBe(0);
    expect(JSON.parse(only.stdout)).toEqual(JSON.parse(full.stdout).messages);
  });

  it('takes the model from the input, else --model, else gpt-4o', async () => {
    const messages = JSON.parse(readFileSync(SESSION, 'utf8')).messages;
    const bare = JSON.stringify(messages);
    const [byDefault, byFlag, byInput] = await Promise.all([
      cli(['--summary'], bare),
      cli(['--model', 'gpt-4', '--summary'], bare),
      cli(['--model', 'gpt-4o', '--summary'], JSON.stringify({ model: 'gpt-4', messages })),
    ]);
    const tokensBefore = (run: { stdout: string }) => (JSON.parse(run.stdout) as Result).tokens_before;
    expect(byDefault.stderr).toMatch(/│ gpt-4o /);
    expect(byFlag.stderr).toMatch(/│ gpt-4 /);
    expect(byInput.stderr).toMatch(/│ gpt-4 /);
    // o200k_base (gpt-4o) and cl100k_base (gpt-4) count the same text differently.
    expect(tokensBefore(byFlag)).not.toBe(tokensBefore(byDefault));
    expect(tokensBefore(byInput)).toBe(tokensBefore(byFlag));
  });

  it('compresses a folder: one JSON line per file, sorted, and a total in --summary', async () => {
    const files = readdirSync(SAMPLES)
      .filter((f) => f.endsWith('.json'))
      .sort();
    const run = await cli([SAMPLES, '--summary']);
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(files.length);
    const parsed = lines.map((line) => JSON.parse(line) as Result & { file: string });
    expect(parsed.map((r) => r.file)).toEqual(files.map((f) => join(SAMPLES, f)));
    for (const { file, ...result } of parsed) expectResultShape(result);
    const total = parsed.reduce((sum, r) => sum + r.tokens_before, 0);
    expect(run.stderr).toContain(`total: ${files.length} files`);
    expect(run.stderr).toContain(total.toLocaleString('en-US'));
  });

  it('--fail-under exits 1 when total savings are below it, 0 when not', async () => {
    const logs = join(SAMPLES, 'logs.chat.json');
    const [above, zero] = await Promise.all([
      cli([SESSION, logs, '--fail-under', '101']),
      cli([SESSION, logs, '--fail-under', '0']),
    ]);
    expect(above.code).toBe(1);
    expect(above.stdout.trimEnd().split('\n')).toHaveLength(2);
    expect(above.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(above.stderr).toMatch(/total savings \d+\.\d% are below --fail-under 101%/);
    expect(zero.code).toBe(0);
  });

  it('reports a bad file among several, still prints the good ones, exits 2', async () => {
    const bad = join(home.dir, 'bad-among-many.json');
    writeFileSync(bad, '{"messages": 42}');
    const run = await cli([SESSION, bad]);
    expect(run.code).toBe(2);
    expect(run.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(run.stdout).file).toBe(SESSION);
    expect(run.stderr.trimEnd().split('\n')).toEqual([
      `svc compress: error: ${bad}: messages: expected an array, got a number`,
    ]);
  });

  it('accepts the context and ML flags of the compress command', async () => {
    const run = await cli([
      SESSION,
      '--protect-turns',
      '2',
      '--no-intelligent-context',
      '--no-compress-first',
      '--context-limit',
      '50000',
      '--score-weights',
      'recency=1,errors=2',
      '--mlcompress-rate',
      '0.5',
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expectResultShape(JSON.parse(run.stdout));
  });

  it('--input-format forces the format', async () => {
    const chatOfMessages = await cli([SESSION_MESSAGES, '--input-format', 'chat']);
    expect(chatOfMessages.code).toBe(0);
    const forced = await cli([SESSION, '--input-format', 'messages']);
    expect(forced.code).toBe(2);
    expect(forced.stderr).toMatch(/agent-session\.json: messages\[0\]\.role: expected "user" or "assistant"/);
  });

  it('--no-record leaves the savings file alone', async () => {
    const own = tempHome();
    try {
      const run = await runCli(['compress', SESSION, '--no-record'], own.dir);
      expect(run.code).toBe(0);
      expect(existsSync(join(own.dir, '.svc', 'proxy_savings.json'))).toBe(false);
    } finally {
      own.cleanup();
    }
  });
});
