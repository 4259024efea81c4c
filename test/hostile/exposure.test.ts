import { afterEach, describe, expect, it } from 'vitest';
import { withOwnerRecords } from '../../src/ccr/owner.js';
import { putAll } from '../../src/ccr/store.js';
import { resolveConfig } from '../../src/config/index.js';
import { contentHash } from '../../src/engine/hash.js';
import { keyHash } from '../../src/server/auth.js';
import { isLoopbackHost } from '../../src/server/exposure.js';
import { startupLines } from '../../src/server/startup.js';
import { startSvc, type TestSvc } from '../server/helpers.js';

let svc: TestSvc | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

const linesFor = (flags: Record<string, unknown>) =>
  startupLines(resolveConfig({ flags, env: { SERVICE_HOME: '/tmp/svc-exposure' } }), 'http://x', false);

describe('binding beyond loopback (issue 15, item 5)', () => {
  it.each(['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost'])('%s is loopback', (host) => {
    expect(isLoopbackHost(host)).toBe(true);
  });
  it.each(['0.0.0.0', '::', '192.168.1.10', '10.0.0.1', 'example.internal'])('%s is not', (host) => {
    expect(isLoopbackHost(host)).toBe(false);
  });

  it('warns at start-up when listening beyond loopback with no API keys', () => {
    const warning = linesFor({ host: '0.0.0.0' }).find((l) => l.level === 'warn');
    expect(warning?.text).toContain('beyond loopback, with no API keys');
    expect(warning?.text).toContain('--api-key');
  });

  it('does not warn on loopback, nor with keys', () => {
    expect(linesFor({ host: '127.0.0.1' }).some((l) => l.text.includes('beyond loopback'))).toBe(false);
    expect(
      linesFor({ host: '0.0.0.0', 'api-key': ['k1'] }).some((l) => l.text.includes('beyond loopback')),
    ).toBe(false);
  });
});

describe('TOIN ignores anonymous retrieve calls (issue 15, item 5)', () => {
  async function retrievalsLearned(
    flags: Record<string, unknown>,
    headers: Record<string, string>,
    owner?: string,
  ): Promise<number> {
    svc = await startSvc({ flags });
    const toin = svc.server.ctx.toin!;
    let learned = 0;
    const original = toin.retrieved.bind(toin);
    toin.retrieved = (hash, fields) => {
      learned += 1;
      return original(hash, fields);
    };
    const text = 'a stored tool output\n'.repeat(20);
    const hash = contentHash(text);
    // stored as the client of `owner` would have stored it (with keys, entries belong to their owner)
    const entries = new Map([[hash, text]]);
    await putAll(svc.server.ctx.ccr, owner ? withOwnerRecords(entries, keyHash(owner)!) : entries);
    const res = await fetch(`${svc.url}/v1/retrieve/${hash}`, { headers });
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 20));
    return learned;
  }

  it('an anonymous endpoint retrieval (no keys configured) does not feed TOIN', async () => {
    expect(await retrievalsLearned({}, {})).toBe(0);
  });

  it('a retrieval with a configured key does', async () => {
    expect(
      await retrievalsLearned({ 'api-key': ['sk-svc'] }, { authorization: 'Bearer sk-svc' }, 'sk-svc'),
    ).toBe(1);
  });
});
