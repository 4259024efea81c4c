import { describe, expect, it } from 'vitest';
import { cacheMode, canonicalJson, responseCacheKey } from '../../src/guards/cache-key.js';

const base = {
  model: 'claude-sonnet-4-5',
  max_tokens: 256,
  system: 'You are terse.',
  temperature: 0.2,
  tools: [{ name: 'grep', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }],
  tool_choice: { type: 'auto' },
  messages: [{ role: 'user', content: 'hello' }],
};
const key = (
  body: Record<string, unknown>,
  extra: { path?: string; keyHash?: string; headers?: Record<string, string> } = {},
) =>
  responseCacheKey({
    path: extra.path ?? '/v1/messages',
    body,
    keyHash: extra.keyHash ?? 'k1',
    headers: extra.headers ?? {},
  });

describe('responseCacheKey', () => {
  it('is a sha256 hex digest and deterministic', () => {
    expect(key(base)).toMatch(/^[0-9a-f]{64}$/);
    expect(key(base)).toBe(key(structuredClone(base)));
  });

  it('ignores key order and whitespace of the JSON the client sent', () => {
    const pretty = JSON.parse(JSON.stringify(base, null, 2)) as Record<string, unknown>;
    const reordered = JSON.parse(
      '{ "messages":[{"content":"hello","role":"user"}], "tool_choice":{"type":"auto"},\n "tools":[{"input_schema":{"properties":{"q":{"type":"string"}},"type":"object"},"name":"grep"}],' +
        ' "temperature":0.2, "system":"You are terse.", "max_tokens":256, "model":"claude-sonnet-4-5" }',
    ) as Record<string, unknown>;
    expect(key(pretty)).toBe(key(base));
    expect(key(reordered)).toBe(key(base));
  });

  it.each([
    ['model', { model: 'claude-haiku-4-5' }],
    ['system', { system: 'You are verbose.' }],
    ['messages', { messages: [{ role: 'user', content: 'hello!' }] }],
    ['tools', { tools: [] }],
    ['tool_choice', { tool_choice: { type: 'any' } }],
    ['temperature', { temperature: 0.3 }],
    ['top_p', { top_p: 0.9 }],
    ['max_tokens', { max_tokens: 257 }],
    ['stop_sequences', { stop_sequences: ['END'] }],
    ['response_format', { response_format: { type: 'json_object' } }],
    ['an unknown future parameter', { reasoning_effort: 'high' }],
  ])('changes with %s', (_name, change) => {
    expect(key({ ...base, ...change })).not.toBe(key(base));
  });

  it('keeps message order significant', () => {
    const two = {
      ...base,
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
      ],
    };
    const swapped = {
      ...base,
      messages: [
        { role: 'assistant', content: 'b' },
        { role: 'user', content: 'a' },
      ],
    };
    expect(key(two)).not.toBe(key(swapped));
  });

  it('gives streaming and non-streaming requests their own keys', () => {
    expect(key({ ...base, stream: true })).not.toBe(key(base));
    expect(key({ ...base, stream: false })).toBe(key(base));
    expect(cacheMode({ stream: true })).toBe('sse');
    expect(cacheMode({ stream: 'yes' })).toBe('json');
  });

  it('separates paths, clients, API versions, sessions and end users', () => {
    expect(key(base, { path: '/v1/chat/completions' })).not.toBe(key(base));
    expect(key(base, { keyHash: 'k2' })).not.toBe(key(base));
    expect(key(base, { headers: { 'anthropic-beta': 'x-2025' } })).not.toBe(key(base));
    expect(key(base, { headers: { 'anthropic-version': '2023-06-01' } })).not.toBe(key(base));
    expect(key(base, { headers: { 'user-agent': 'curl' } })).toBe(key(base));
    // issue 15: metadata (a session) and user (an end user) are part of the key
    expect(key({ ...base, metadata: { user_id: 'u1' } })).not.toBe(key(base));
    expect(key({ ...base, user: 'u2' })).not.toBe(key(base));
    expect(key({ ...base, user: 'u2' })).toBe(key({ ...base, user: 'u2' }));
  });

  it('tells long texts apart by their content, in any key order', () => {
    const long = 'x'.repeat(600);
    const withText = (text: string) => ({ ...base, messages: [{ role: 'user', content: text }] });
    expect(key(withText(`${long}a`))).not.toBe(key(withText(`${long}b`)));
    const reordered = Object.fromEntries(
      Object.entries({ ...base, messages: [{ content: `${long}a`, role: 'user' }] }).reverse(),
    );
    expect(key(reordered)).toBe(key(withText(`${long}a`)));
    // A short string spelled like the stand-in of a long one is still another value.
    expect(canonicalJson(`${long}a`)).not.toBe(canonicalJson(canonicalJson(`${long}a`)));
  });

  it('writes canonical JSON like a sorted-key JSON.stringify for short values', () => {
    const value = { b: [1, 'two', null, true, { d: 1, c: 2 }], a: 'é"\\n', u: undefined };
    expect(canonicalJson(value)).toBe('{"a":"é\\"\\\\n","b":[1,"two",null,true,{"c":2,"d":1}]}');
  });
});
