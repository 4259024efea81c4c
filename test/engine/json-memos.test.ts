import { describe, expect, it } from 'vitest';
import { beginCall, endCall } from '../../src/engine/call-scope.js';
import { compressJson } from '../../src/engine/compressors/json.js';
import { nestsDeeperThan, parseJsonContent } from '../../src/engine/compressors/json-parse.js';
import { renderCompact } from '../../src/engine/compressors/json-render.js';
import { collectSubtrees, dedupeSubtrees } from '../../src/engine/compressors/json-subtrees.js';
import { ctxOf, rng } from './helpers.js';

/** Runs `f` inside an engine call (where the JSON memos are filled). */
function inCall<T>(f: () => T): T {
  beginCall();
  try {
    return f();
  } finally {
    endCall();
  }
}

/** An API-like document: records with nested objects, links, repeated parts and an error or two. */
function apiDocument(seed: number): string {
  const rand = rng(seed);
  const owner = {
    id: 7,
    login: 'octo',
    url: 'https://api.example.com/users/octo',
    repos_url: 'https://api.example.com/users/octo/repos',
    bio: 'x'.repeat(150),
  };
  const items = Array.from({ length: 20 + Math.floor(rand() * 30) }, (_, i) => ({
    id: 1000 + i,
    url: `https://api.example.com/items/${1000 + i}`,
    comments_url: `https://api.example.com/items/${1000 + i}/comments`,
    status: rand() < 0.1 ? 'failed' : 'ok',
    ms: Math.floor(rand() * 100),
    owner: rand() < 0.5 ? owner : { ...owner, id: i },
    tags: Array.from({ length: 3 }, (_, k) => ({ name: `t${k}`, weight: k })),
  }));
  return JSON.stringify({ total: items.length, items, owner }, null, 2);
}

describe('renderCompact', () => {
  it('writes uniform records inside uniform records in columnar form, each form where shorter', () => {
    const tags = ['a', 'b', 'c', 'd'].map((label, weight) => ({ label, weight }));
    const inner = '{"$columns":["label","weight"],"$rows":[["a",0],["b",1],["c",2],["d",3]]}';
    const short = [1, 2, 3].map((id) => ({ id, tags }));
    expect(renderCompact(short)).toBe(
      `[{"id":1,"tags":${inner}},{"id":2,"tags":${inner}},{"id":3,"tags":${inner}}]`,
    );
    const long = [1, 2, 3].map((id) => ({ identifier_of_the_row: id, tags_of_the_row: tags }));
    expect(renderCompact(long)).toBe(
      `{"$columns":["identifier_of_the_row","tags_of_the_row"],"$rows":[[1,${inner}],[2,${inner}],[3,${inner}]]}`,
    );
  });

  it('keeps the plain form when the columnar one is not 15% shorter', () => {
    const rows = [1, 2, 3].map((i) => ({ a: 'x'.repeat(40 + i), b: i }));
    expect(renderCompact(rows)).toBe(JSON.stringify(rows));
  });

  it('is JSON.stringify where no array is columnar', () => {
    const value = { a: [1, 'two', { three: [3] }], b: { c: null, d: -0, e: 'é"\n' } };
    expect(renderCompact(value)).toBe(JSON.stringify(value));
  });
});

describe('nesting depth', () => {
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  it('is measured on the parsed value: 256 levels are JSON, 257 are text', () => {
    expect(nestsDeeperThan(JSON.parse(nested(256)), 256)).toBe(false);
    expect(nestsDeeperThan(JSON.parse(nested(257)), 256)).toBe(true);
    expect(parseJsonContent(nested(256))?.shape).toBe('document');
    expect(parseJsonContent(nested(257))).toBeNull();
  });
});

describe('JSON memos of an engine call', () => {
  it('leave compressJson as it is outside a call, and again within the same call', () => {
    for (let seed = 1; seed <= 5; seed++) {
      const text = apiDocument(seed);
      const earlierText = apiDocument(seed + 100);
      const earlier = new Set<string>();
      collectSubtrees(JSON.parse(earlierText), earlier);
      const ctx = ctxOf({ earlierJson: () => earlier, earlierLinkShapes: () => new Set() });
      const outside = compressJson(text, ctx);
      expect(outside?.lossy).toBe(true);
      const within = inCall(() => [compressJson(text, ctx), compressJson(text, ctx)]);
      expect(within).toEqual([outside, outside]);
    }
  });

  it('give the history scan the same subtrees after the compressor digested the value', () => {
    const value = parseJsonContent(apiDocument(9))?.value;
    const alone = new Set<string>();
    collectSubtrees(value, alone);
    const after = inCall(() => {
      const parsed = parseJsonContent(apiDocument(9))?.value;
      dedupeSubtrees(parsed, new Set());
      const into = new Set<string>();
      collectSubtrees(parsed, into);
      return into;
    });
    expect([...after].sort()).toEqual([...alone].sort());
    expect(alone.size).toBeGreaterThan(0);
  });
});
