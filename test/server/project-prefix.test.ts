import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { clientOf } from '../../src/server/attribution.js';
import { type MockUpstream, replyJson, startMockUpstream, startSvc, type TestSvc, until } from './helpers.js';
import { CHAT_REPLY } from './sse-mocks.js';

// The /p/NAME/ base-URL prefix (issue 18, item 7) is an attribution label,
// never a way around routing: it reaches the proxied /v1 API only, through
// the same canonical path, and the guards see the same route as without it.

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

async function setup(flags: Record<string, unknown>): Promise<void> {
  upstream = await startMockUpstream((_req, res) => replyJson(res, 200, CHAT_REPLY));
  svc = await startSvc({
    flags: { 'compat-api-url': `${upstream.url}/v1`, 'messages-api-url': `${upstream.url}/v1`, ...flags },
  });
}

/** A raw request: the path is sent exactly as written (fetch would resolve dot segments itself). */
function raw(
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; text: string }> {
  const url = new URL(svc!.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path, method: body ? 'POST' : 'GET', headers },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const CHAT_BODY = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }] });
const chat = (path: string, headers: Record<string, string> = {}) =>
  raw(path, { 'content-type': 'application/json', authorization: 'Bearer sk-1', ...headers }, CHAT_BODY);

describe('the /p/NAME/ project prefix', () => {
  it('cannot reach paths outside /v1, nor climb out of the prefix', async () => {
    await setup({ 'rate-limit': false });
    const cases: [string, number][] = [
      ['/p/alpha/stats', 404], // svc's own endpoints are not under the prefix
      ['/p/alpha/dashboard', 404],
      ['/p/alpha', 404],
      ['/p/alpha/', 404],
      ['/p/alpha/../stats', 400], // dot segments cannot climb over the prefix
      ['/p/alpha/v1/../../stats', 400],
      ['/p/alpha/v1/%2e%2e/stats', 400], // encoded dots are dots
      ['/p/alpha/v1/..%2fstats', 400], // encoded slashes are refused
      ['/p/../v1/chat/completions', 400], // NAME is validated
      ['/p/./v1/chat/completions', 400],
      ['/p/%2e%2e/v1/chat/completions', 400],
      ['/p/a%2Fb/v1/chat/completions', 400],
      ['/p/has%20space/v1/chat/completions', 400],
      [`/p/${'x'.repeat(65)}/v1/chat/completions`, 400],
    ];
    for (const [path, status] of cases) {
      const res = await raw(path);
      expect(res.status, path).toBe(status);
      expect(res.text, path).not.toContain('persistent_savings');
    }
    // a dot segment inside /v1 resolves, and the request is still proxied under /v1
    const ok = await chat('/p/alpha/v1/./chat/../chat/completions');
    expect(ok.status).toBe(200);
    expect(upstream!.requests.map((r) => r.url)).toEqual(['/v1/chat/completions']);
    await until(() => svc!.events.length >= 1);
    expect(svc!.events.at(-1)!.project).toBe('alpha');
    expect(svc!.events.at(-1)!.path).toBe('/v1/chat/completions');
  });

  it('refuses an x-svc-project header that is not a valid name', async () => {
    await setup({ 'rate-limit': false });
    for (const bad of ['..', 'a/b', 'x'.repeat(65), '-lead']) {
      const res = await chat('/v1/chat/completions', { 'x-svc-project': bad });
      expect(res.status, bad).toBe(400);
    }
    expect(upstream!.requests).toHaveLength(0);
    expect((await chat('/v1/chat/completions', { 'x-svc-project': 'team-a.api_2' })).status).toBe(200);
  });

  it('does not skip the rate limit: the prefixed route shares the key bucket', async () => {
    await setup({ 'rate-limit-rpm': 2, cache: false });
    expect((await chat('/v1/chat/completions')).status).toBe(200);
    expect((await chat('/p/alpha/v1/chat/completions')).status).toBe(200);
    const limited = await chat('/p/beta/v1/chat/completions');
    expect(limited.status).toBe(429);
    expect(upstream!.requests).toHaveLength(2);
  });

  it('shares the response cache with the unprefixed route (same route, same key)', async () => {
    await setup({ 'rate-limit': false });
    expect((await chat('/v1/chat/completions')).status).toBe(200);
    await until(() => svc!.events.length >= 1);
    expect((await chat('/p/alpha/v1/chat/completions')).status).toBe(200);
    await until(() => svc!.events.length >= 2);
    expect(upstream!.requests).toHaveLength(1);
    expect(svc!.events.map((e) => [e.project, e.cached])).toEqual([
      ['default', false],
      ['alpha', true],
    ]);
  });

  it('does not skip the budget', async () => {
    // gpt-4o's reply costs more than this hourly budget: the second request is refused, prefixed or not.
    await setup({ 'rate-limit': false, cache: false, 'budget-hourly': 0.000001 });
    expect((await chat('/p/alpha/v1/chat/completions')).status).toBe(200);
    await until(() => svc!.events.length >= 1);
    const prefixed = await chat('/p/alpha/v1/chat/completions');
    const plain = await chat('/v1/chat/completions');
    expect(prefixed.status).toBe(402);
    expect(plain.status).toBe(402);
    expect(prefixed.text).toContain('budget');
    expect(upstream!.requests).toHaveLength(1);
  });
});

describe('client from the user agent', () => {
  it.each([
    ['claude-cli/2.0.14 (external, cli)', 'claude-code'],
    ['claude-cli/2.1.197 (external, sdk-cli)', 'claude-code'], // what `claude -p` sent in test/agents
    ['codex_exec/0.169.0 (Debian 12.0.0; x86_64) unknown (codex_exec; 0.169.0)', 'codex'],
    ['codex_cli_rs/0.46.0 (Ubuntu 24.4.0; x86_64) xterm-256color', 'codex'],
    ['codex_exec/0.46.0 (Mac OS 15.0.0; arm64) unknown', 'codex'],
    ['OpenAI/JS 5.12.2', 'openai-sdk'],
    ['OpenAI/Python 1.99.1', 'openai-sdk'],
    ['AzureOpenAI/JS 5.12.2', 'openai-sdk'],
    ['Anthropic/JS 0.60.0', 'anthropic-sdk'],
    ['Anthropic/Python 0.64.0', 'anthropic-sdk'],
    ['svc-client/JS', 'svc'],
    ['curl/8.5.0', 'other'],
    [undefined, 'other'],
  ])('%s -> %s', (ua, client) => {
    expect(clientOf(ua)).toBe(client);
  });
});
