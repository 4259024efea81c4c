import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../cli/helpers.js';
import { startTestRedis } from '../helpers/redis-server.js';
import {
  bigToolOutput,
  childEnv,
  type Mock,
  mockUpstream,
  type ServeProcess,
  startServe,
} from './helpers.js';

type Json = Record<string, unknown>;
const textOf = (r: unknown) => ((r as { content: Array<{ text: string }> }).content[0]?.text ?? '') as string;

async function connect(home: string, args: string[]): Promise<Client> {
  const client = new Client({ name: 'svc-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', ...args],
      env: childEnv(home),
      stderr: 'pipe',
    }),
  );
  return client;
}

const messagesWithToolOutput = () => [
  { role: 'user', content: 'Which test failed?' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'run_tests', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: 'call_1', content: bigToolOutput() },
];

describe('svc mcp', () => {
  let home: string;
  let upstream: Mock;
  let serve: ServeProcess;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'svc-mcp-'));
    upstream = await mockUpstream();
    serve = await startServe(home, [
      '--messages-api-url',
      `${upstream.url}/v1`,
      '--compat-api-url',
      `${upstream.url}/v1`,
    ]);
  }, 30_000);
  afterAll(async () => {
    await serve?.stop();
    await upstream?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('lists its three tools, redeems a marker written by svc serve, and the use appears in /stats', async () => {
    // svc serve compresses a conversation: the marker's original is in the server's CCR store.
    const res = await fetch(`${serve.url}/v1/compress`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: messagesWithToolOutput() }),
    });
    expect(res.status).toBe(200);
    const compressed = (await res.json()) as { messages: Json[]; ccr_hashes: string[] };
    const marker = JSON.stringify(compressed.messages);
    const hash = /hash=([0-9a-f]{24})/.exec(marker)?.[1];
    expect(hash, marker.slice(0, 400)).toBeDefined();

    const client = await connect(home, ['--url', serve.url]);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name).sort()).toEqual(['svc_compress', 'svc_retrieve', 'svc_stats']);
      const retrieveTool = tools.tools.find((t) => t.name === 'svc_retrieve');
      expect(retrieveTool?.inputSchema.required).toEqual(['hash']);

      const before = (await (await fetch(`${serve.url}/stats`)).json()) as Json;
      const got = await client.callTool({ name: 'svc_retrieve', arguments: { hash: `hash=${hash}` } });
      expect(got.isError).toBeFalsy();
      const items = JSON.parse(textOf(got)) as Json[];
      expect(items).toHaveLength(300);
      expect(items.find((i) => i.status === 'failed')?.message).toBe('expected 3 to equal 4');

      const queried = await client.callTool({
        name: 'svc_retrieve',
        arguments: { hash: hash as string, query: 'status=failed' },
      });
      expect(textOf(queried)).toContain('expected 3 to equal 4');
      expect(textOf(queried)).not.toContain('file5.ts');

      const after = (await (await fetch(`${serve.url}/stats`)).json()) as Json;
      const counts = (r: Json) =>
        (r.retrievals as { total: number; endpoint: number }) ?? { total: 0, endpoint: 0 };
      expect(counts(after).total - counts(before).total).toBe(2);
      expect(counts(after).endpoint - counts(before).endpoint).toBe(2);

      // svc_compress goes through the same server: counted in its /stats like any request.
      const text = await client.callTool({ name: 'svc_compress', arguments: { text: bigToolOutput(200) } });
      expect(text.isError, textOf(text)).toBeFalsy();
      const result = JSON.parse(textOf(text)) as Json;
      expect(result.tokens_saved as number).toBeGreaterThan(0);
      expect(String(result.text)).toMatch(/hash=[0-9a-f]{24}/);
      const last = (await (await fetch(`${serve.url}/stats`)).json()) as {
        requests: { total: number };
        tokens: { saved: number };
      };
      expect(last.requests.total).toBe((after.requests as { total: number }).total + 1);
      expect(last.tokens.saved).toBeGreaterThan((after.tokens as { saved: number }).saved);

      const stats = JSON.parse(textOf(await client.callTool({ name: 'svc_stats', arguments: {} }))) as Json;
      expect(stats.source).toBe('server');
      expect((stats.stats as { retrievals: { total: number } }).retrievals.total).toBe(counts(after).total);

      const unknown = await client.callTool({ name: 'svc_retrieve', arguments: { hash: 'a'.repeat(24) } });
      expect(unknown.isError).toBe(true);
      expect(textOf(unknown)).toMatch(/unknown or expired/);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('with no server answering, compresses into the local stores and redeems from them', async () => {
    const local = mkdtempSync(join(tmpdir(), 'svc-mcp-local-'));
    const client = await connect(local, ['--url', 'http://127.0.0.1:9']);
    try {
      const out = await client.callTool({
        name: 'svc_compress',
        arguments: { messages: messagesWithToolOutput() },
      });
      expect(out.isError, textOf(out)).toBeFalsy();
      const result = JSON.parse(textOf(out)) as { ccr_hashes: string[]; tokens_saved: number };
      expect(result.ccr_hashes.length).toBeGreaterThan(0);
      const hash = result.ccr_hashes[0] as string;
      const got = await client.callTool({ name: 'svc_retrieve', arguments: { hash } });
      expect(got.isError, textOf(got)).toBeFalsy();
      expect(textOf(got)).toContain('expected 3 to equal 4');
      // The savings went to the savings file: svc_stats reads them from it.
      const stats = JSON.parse(textOf(await client.callTool({ name: 'svc_stats', arguments: {} }))) as Json;
      expect(stats.source).toBe('file');
      // Compressed locally, nothing sent to a provider: recorded under source cli, no USD.
      const lifetime = stats.lifetime as {
        tokens_saved: number;
        cli_tokens_saved: number;
        compression_savings_usd: number;
      };
      expect(lifetime.cli_tokens_saved).toBe(result.tokens_saved);
      expect(lifetime.tokens_saved).toBe(0);
      expect(lifetime.compression_savings_usd).toBe(0);
    } finally {
      await client.close();
      rmSync(local, { recursive: true, force: true });
    }
  }, 60_000);

  it('with --store and no server answering: redeems a marker of svc serve --store from Redis', async () => {
    const redis = await startTestRedis();
    const shared = mkdtempSync(join(tmpdir(), 'svc-mcp-redis-'));
    let replica: ServeProcess | undefined;
    try {
      replica = await startServe(shared, [
        '--store',
        redis.url,
        '--messages-api-url',
        `${upstream.url}/v1`,
        '--compat-api-url',
        `${upstream.url}/v1`,
      ]);
      const res = await fetch(`${replica.url}/v1/compress`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', messages: messagesWithToolOutput() }),
      });
      const { ccr_hashes } = (await res.json()) as { ccr_hashes: string[] };
      expect(ccr_hashes.length).toBeGreaterThan(0);
      await replica.stop();
      replica = undefined;
      // Another machine's view: no server, its own empty SERVICE_HOME, only the shared store.
      const other = mkdtempSync(join(tmpdir(), 'svc-mcp-redis-other-'));
      const client = await connect(other, ['--url', 'http://127.0.0.1:9', '--store', redis.url]);
      try {
        const got = await client.callTool({
          name: 'svc_retrieve',
          arguments: { hash: ccr_hashes[0] as string },
        });
        expect(got.isError, textOf(got)).toBeFalsy();
        expect(textOf(got)).toContain('expected 3 to equal 4');
      } finally {
        await client.close();
        rmSync(other, { recursive: true, force: true });
      }
    } finally {
      await replica?.stop();
      await redis.destroy();
      rmSync(shared, { recursive: true, force: true });
    }
  }, 60_000);
});
