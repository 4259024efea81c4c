import { describe, expect, it } from 'vitest';
import { canonicalPath } from '../../src/server/canonical-path.js';
import { requestTarget } from '../../src/server/proxy/upstream.js';

/** What undici sends for a URL string: `new URL(url)`'s origin, pathname and search. */
function viaUrl(url: string): { origin: string; path: string } {
  const u = new URL(url);
  return { origin: u.origin, path: u.search ? `${u.pathname}${u.search}` : u.pathname };
}

describe('requestTarget: the origin and target undici would send, without parsing each URL', () => {
  it.each([
    'http://127.0.0.1:8080/v1/messages',
    'http://127.0.0.1:80/v1/messages',
    'https://API.Example.com:443/v1/chat/completions?beta=true',
    'https://user:pw@api.example.com/anthropic/v1/messages',
    'http://[::1]:9000/v1/messages?key=a%20b&x=1',
    'http://h/v1/models/a%20b',
    'http://h/v1/models/a b',
    "http://h/v1/files?name='x'",
    'http://h/v1/x/%2e%2E/y',
    'http://h/v1/./x',
    'http://h/v1/../x',
    'http://h/v1//x',
    'http://h/v1/x/..',
    'http://h/v1/\u00e9',
    'http://h/v1/{x}|^`',
    'http://h/v1/x?q=<a>"b"',
    'http://h',
    'http://h?x=1',
    'http://h/v1/x#frag',
  ])('%s', (url) => {
    expect(requestTarget(url)).toEqual(viaUrl(url));
  });
});

describe('canonicalPath fast path: a plain path is its own canonical form', () => {
  it.each([
    ['/v1/messages', '/v1/messages'],
    ['/v1/chat/completions', '/v1/chat/completions'],
    ['/v1/models/claude-sonnet-4.5', '/v1/models/claude-sonnet-4.5'],
    ['/v1/.../x', '/v1/.../x'],
    ['/v1/.x/y.', '/v1/.x/y.'],
    ['/v1/x/.', '/v1/x/'],
    ['/v1/x/..', '/v1/'],
    ['/v1/x/', '/v1/x/'],
  ])('%s -> %s', (raw, canonical) => {
    expect(canonicalPath(raw)).toBe(canonical);
  });
});
