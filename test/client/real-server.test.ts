/**
 * The client against the real svc server (createSvcServer on 127.0.0.1:0,
 * SERVICE_HOME in a temp dir). The engine may still be a no-op here, so these
 * tests assert transport, shape and fallback; where an exact change matters,
 * the server runs with the deterministic fake engine the server tests use.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { withCompression as withAnthropicCompression } from '../../packages/client/src/adapters/anthropic.js';
import { withCompression as withOpenAiCompression } from '../../packages/client/src/adapters/openai.js';
import {
  CompressionClient,
  compress,
  SvcAuthError,
  type SvcClientError,
  SvcCompressError,
  SvcConnectionError,
} from '../../packages/client/src/index.js';
import type { CompressFn } from '../../src/compression.js';
import { resolveConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/log.js';
import { createSvcServer } from '../../src/server/app.js';
import { createFakeCompress, throwingCompress } from '../server/fake-engine.js';
import { anthropicRequest, LONG_LOG, LONG_TOOL_OUTPUT } from './fixtures.js';
import type { MockServer } from './helpers.js';
import { startAnthropicUpstream, startOpenAiUpstream } from './providers.js';

const MESSAGES = [
  { role: 'user', content: 'read the log' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'cat', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: 'c1', content: LONG_LOG },
  { role: 'user', content: 'what failed?' },
];

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  vi.unstubAllEnvs();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Starts the real server; returns its URL and the number of engine calls. */
async function startRealSvc(options: { env?: Record<string, string>; compress?: CompressFn } = {}) {
  const home = mkdtempSync(join(tmpdir(), 'svc-client-test-'));
  const config = resolveConfig({
    flags: { port: 0, host: '127.0.0.1' },
    env: { SERVICE_HOME: home, ...options.env },
  });
  let engineCalls = 0;
  const engine = options.compress;
  const server = await createSvcServer({
    config,
    logger: silentLogger,
    ...(engine
      ? {
          compress: ((...args: Parameters<CompressFn>) => {
            engineCalls++;
            return engine(...args);
          }) as CompressFn,
        }
      : {}),
  });
  const url = await server.listen();
  const close = async () => {
    await server.close(1000);
    rmSync(home, { recursive: true, force: true });
  };
  cleanups.push(close);
  return { url, close, engineCalls: () => engineCalls };
}

async function track(p: Promise<MockServer>) {
  const s = await p;
  cleanups.push(() => s.close());
  return s;
}

const instant = async () => {};

describe('compress() against the real server', () => {
  it('returns the compression result in the client shape', async () => {
    const svc = await startRealSvc();
    const result = await compress(MESSAGES, { baseUrl: svc.url, model: 'gpt-4o' });
    expect(result.compressed).toBe(true);
    expect(Array.isArray(result.messages)).toBe(true);
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(result.tokensBefore).toBeGreaterThan(0);
    expect(result.tokensAfter).toBeGreaterThan(0);
    expect(result.tokensSaved).toBe(result.tokensBefore! - result.tokensAfter!);
    expect(result.compressionRatio).toBeCloseTo(result.tokensAfter! / result.tokensBefore!, 6);
    expect(Array.isArray(result.transformsApplied)).toBe(true);
    expect(Array.isArray(result.ccrHashes)).toBe(true);
    expect(result.error).toBeUndefined();
  });

  it('with a compressing engine: the changed messages and their CCR hashes come back', async () => {
    const svc = await startRealSvc({ compress: createFakeCompress() });
    const result = await new CompressionClient({ baseUrl: svc.url, model: 'gpt-4o' }).compress(MESSAGES);
    const tool = result.messages[2]!.content as string;
    expect(tool.startsWith('FAKE2024-01-01')).toBe(true);
    expect(tool).toMatch(/\[svc: 40 lines omitted; retrieve with svc_retrieve hash=[0-9a-f]{24}\]/);
    expect(result.ccrHashes).toHaveLength(1);
    expect(tool).toContain(result.ccrHashes[0]);
    expect(result.transformsApplied).toEqual(['fake:marker']);
    expect(result.tokensSaved).toBeGreaterThan(0);
    expect(result.messages.slice(0, 2)).toEqual(MESSAGES.slice(0, 2));
  });

  it('the bypass header returns the messages as they are', async () => {
    const svc = await startRealSvc({ compress: createFakeCompress() });
    const result = await compress(MESSAGES, { baseUrl: svc.url, model: 'gpt-4o', bypass: true });
    expect(result).toMatchObject({
      compressed: true,
      messages: MESSAGES,
      tokensSaved: 0,
      transformsApplied: [],
    });
    expect(svc.engineCalls()).toBe(0);
  });

  for (const fallback of [true, false]) {
    it(`400 (missing model) throws a compress error naming the field, fallback: ${fallback}`, async () => {
      const svc = await startRealSvc();
      const err = await compress(MESSAGES, { baseUrl: svc.url, fallback }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SvcCompressError);
      expect(err).toMatchObject({ status: 400, serverMessage: expect.stringMatching(/^model /) });
    });

    it(`401 with keys configured throws an auth error, fallback: ${fallback}`, async () => {
      const svc = await startRealSvc({ env: { SERVICE_API_KEYS: 'svc-key-1,svc-key-2' } });
      for (const apiKey of [undefined, 'wrong-key']) {
        const err = await compress(MESSAGES, { baseUrl: svc.url, model: 'gpt-4o', apiKey, fallback }).catch(
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(SvcAuthError);
        expect((err as SvcClientError).status).toBe(401);
        expect(JSON.stringify(err) + String((err as Error).stack)).not.toContain('wrong-key');
      }
      const ok = await compress(MESSAGES, {
        baseUrl: svc.url,
        model: 'gpt-4o',
        apiKey: 'svc-key-2',
        fallback,
      });
      expect(ok.compressed).toBe(true);
    });

    it(`503 (engine failure) is retried, then ${fallback ? 'falls back' : 'throws a compress error'}`, async () => {
      const svc = await startRealSvc({ compress: throwingCompress });
      const outcome = await compress(MESSAGES, {
        baseUrl: svc.url,
        model: 'gpt-4o',
        fallback,
        sleep: instant,
      }).catch((e: unknown) => e);
      expect(svc.engineCalls()).toBe(2);
      if (fallback) {
        expect(outcome).toMatchObject({ compressed: false, messages: MESSAGES, tokensBefore: null });
        expect((outcome as { error: SvcClientError }).error).toMatchObject({ status: 503 });
      } else {
        expect(outcome).toBeInstanceOf(SvcCompressError);
        expect(outcome).toMatchObject({ status: 503, attempts: 2 });
      }
    });

    it(`a stopped server is a connection error, fallback: ${fallback}`, async () => {
      const svc = await startRealSvc();
      await svc.close();
      const outcome = await compress(MESSAGES, {
        baseUrl: svc.url,
        model: 'gpt-4o',
        fallback,
        sleep: instant,
      }).catch((e: unknown) => e);
      if (fallback) expect(outcome).toMatchObject({ compressed: false, messages: MESSAGES });
      else expect(outcome).toBeInstanceOf(SvcConnectionError);
    });
  }

  it('picks up SERVICE_BASE_URL and SERVICE_API_KEY', async () => {
    const svc = await startRealSvc({ env: { SERVICE_API_KEYS: 'env-key' } });
    vi.stubEnv('SERVICE_BASE_URL', svc.url);
    vi.stubEnv('SERVICE_API_KEY', 'env-key');
    expect((await compress(MESSAGES, { model: 'gpt-4o' })).compressed).toBe(true);
    vi.stubEnv('SERVICE_API_KEY', 'not-the-key');
    await expect(compress(MESSAGES, { model: 'gpt-4o' })).rejects.toBeInstanceOf(SvcAuthError);
  });
});

describe('adapters against the real server', () => {
  it('OpenAI: the upstream receives what the real svc compressed', async () => {
    const svc = await startRealSvc({ compress: createFakeCompress() });
    const upstream = await track(startOpenAiUpstream());
    const client = withOpenAiCompression(
      new OpenAI({ apiKey: 'sk-provider', baseURL: `${upstream.url}/v1`, maxRetries: 0 }),
      { baseUrl: svc.url },
    );
    await client.chat.completions.create({ model: 'gpt-4o', messages: MESSAGES as never });
    const sent = (upstream.received[0]!.json as { messages: Array<{ content: unknown }> }).messages;
    expect(sent[2]!.content).toMatch(
      /^FAKE2024-01-01 \[svc: 40 lines omitted; retrieve with svc_retrieve hash=/,
    );
    expect(sent.slice(0, 2)).toEqual(MESSAGES.slice(0, 2));
    expect(sent[3]).toEqual(MESSAGES[3]);
  });

  it('Anthropic: compressed tool results spliced in place, images/thinking/cache_control intact', async () => {
    const svc = await startRealSvc({ compress: createFakeCompress() });
    const upstream = await track(startAnthropicUpstream());
    const client = withAnthropicCompression(
      new Anthropic({ apiKey: 'sk-ant', baseURL: upstream.url, maxRetries: 0 }),
      { baseUrl: svc.url },
    );
    await client.messages.create(anthropicRequest() as never);
    const sent = upstream.received[0]!.json as ReturnType<typeof anthropicRequest>;
    const original = anthropicRequest();
    const blocks = sent.messages[2]!.content as Array<Record<string, unknown>>;
    expect(blocks[0]!.content).toMatch(
      /^FAKE\[\{"id":0," \[svc: 1 lines omitted; retrieve with svc_retrieve hash=/,
    );
    expect(blocks[0]!.cache_control).toEqual({ type: 'ephemeral' });
    const inner = blocks[1]!.content as Array<Record<string, unknown>>;
    expect(inner[0]!.text).toMatch(/^FAKE2024-01-01 \[svc: 40 lines omitted/);
    expect(inner[1]).toEqual((original.messages[2]!.content[1] as { content: unknown[] }).content[1]);
    // Everything outside the two tool results is exactly as sent.
    const restore = structuredClone(sent);
    const restoredBlocks = restore.messages[2]!.content as Array<Record<string, unknown>>;
    restoredBlocks[0]!.content = LONG_TOOL_OUTPUT;
    (restoredBlocks[1]!.content as Array<Record<string, unknown>>)[0]!.text = LONG_LOG;
    expect(JSON.stringify(restore)).toBe(JSON.stringify(original));
  });
});
