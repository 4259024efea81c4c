import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMarkers } from '../../src/engine/markers.js';
import { type MockUpstream, replyJson, startMockUpstream, startSvc, until } from '../server/helpers.js';

let dir: string;
let modelDir: string;
let upstream: MockUpstream;

const PROSE = Array.from(
  { length: 40 },
  (_, i) =>
    `the deployment answered slowly because the queue was full and the workers were waiting during window ${i}.`,
).join(' ');

function chatBody() {
  return {
    model: 'gpt-4o',
    messages: [
      { role: 'user', content: 'why was it slow?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'notes', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: PROSE },
      { role: 'user', content: 'summarize' },
    ],
  };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-mlint-'));
  modelDir = join(dir, 'model');
  execFileSync(process.execPath, ['scripts/make-ml-model.js', '--kind', 'tiny', '--out', modelDir]);
  upstream = await startMockUpstream((_req, res) =>
    replyJson(res, 200, {
      id: 'x',
      object: 'chat.completion',
      choices: [],
      usage: { prompt_tokens: 1, completion_tokens: 1 },
    }),
  );
});

afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('--mlcompress through the proxy', () => {
  it('forwards prose shortened by the model, with a redeemable marker', async () => {
    const svc = await startSvc({
      flags: {
        mlcompress: true,
        'mlcompress-model': modelDir,
        'compat-api-url': `${upstream.url}/v1`,
        cache: false,
      },
    });
    try {
      expect(svc.server.ctx.mlProvider).toBe('cpu');
      const res = await fetch(`${svc.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
        body: JSON.stringify(chatBody()),
      });
      expect(res.status).toBe(200);
      const sent = JSON.parse(upstream.requests.at(-1)!.body.toString()) as ReturnType<typeof chatBody>;
      const tool = sent.messages[2]!.content as string;
      expect(tool.length).toBeLessThan(PROSE.length * 0.6);
      const marker = parseMarkers(tool).find((m) => m.unit === 'words');
      expect(marker).toBeDefined();
      expect(await svc.server.ctx.ccr.get(marker!.hash)).toBe(PROSE);
      expect(sent.messages[3]).toEqual({ role: 'user', content: 'summarize' });
    } finally {
      await svc.close();
    }
  });

  it('runs without it, and says where the model was expected, when the model is missing', async () => {
    const svc = await startSvc({ flags: { mlcompress: true, 'mlcompress-model': join(dir, 'none') } });
    try {
      expect(svc.server.ctx.mlProvider).toBeUndefined();
      const health = await fetch(`${svc.url}/health`);
      expect(health.status).toBe(200);
    } finally {
      await svc.close();
    }
  });
});

describe('svc serve --mlcompress (the built CLI, runtime installed, model given)', () => {
  it('prints the enabled line with the device it got', async () => {
    const home = mkdtempSync(join(tmpdir(), 'svc-mlserve-'));
    const child = spawn(
      process.execPath,
      [
        'bin/run.js',
        'serve',
        '--port',
        '0',
        '--mlcompress',
        '--mlcompress-model',
        modelDir,
        '--no-telemetry',
      ],
      { env: { ...process.env, SERVICE_HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    try {
      await until(() => /listening on/.test(stderr) || child.exitCode !== null, 20_000);
      await until(() => /ML compression: enabled/.test(stderr) || child.exitCode !== null, 20_000);
      expect(stderr).toMatch(/ML compression: enabled \(device=cpu, rate=[\d.]+\)/);
    } finally {
      child.kill('SIGTERM');
      rmSync(home, { recursive: true, force: true });
    }
  }, 45_000);
});

describe('svc compress --mlcompress', () => {
  it('applies the same ML pass offline', () => {
    const input = join(dir, 'convo.json');
    writeFileSync(input, JSON.stringify(chatBody()));
    const out = execFileSync(
      process.execPath,
      ['bin/run.js', 'compress', input, '--mlcompress', '--mlcompress-model', modelDir, '--no-record'],
      { encoding: 'utf8', env: { ...process.env, SERVICE_HOME: dir } },
    );
    const result = JSON.parse(out) as { transforms_applied: string[]; tokens_saved: number };
    expect(result.transforms_applied.some((t) => t.startsWith('mlcompress:'))).toBe(true);
    expect(result.tokens_saved).toBeGreaterThan(0);
  });

  it('warns with the expected model path and still compresses without it', () => {
    const input = join(dir, 'convo2.json');
    writeFileSync(input, JSON.stringify(chatBody()));
    const run = spawnSync(
      process.execPath,
      [
        'bin/run.js',
        'compress',
        input,
        '--mlcompress',
        '--mlcompress-model',
        join(dir, 'missing'),
        '--no-record',
      ],
      { encoding: 'utf8', env: { ...process.env, SERVICE_HOME: dir } },
    );
    expect(run.status).toBe(0);
    expect(run.stderr).toContain(join(dir, 'missing'));
    expect(JSON.parse(run.stdout).messages).toHaveLength(4);
  });
});
