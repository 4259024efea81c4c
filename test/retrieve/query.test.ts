import { describe, expect, it } from 'vitest';
import { matchQuery, parseQuery } from '../../src/ccr/query.js';

describe('parseQuery', () => {
  it('reads words, phrases and field=value pairs', () => {
    expect(parseQuery('Error status=failed "disk full" user.name:Ann')).toEqual([
      { value: 'error' },
      { field: 'status', value: 'failed' },
      { value: 'disk full' },
      { field: 'user.name', value: 'ann' },
    ]);
  });
});

describe('matchQuery', () => {
  const items =
    '[\n  {"id": 1, "status": "ok",   "msg": "fine"},\n  {"id": 2, "status": "failed", "msg": "Disk full"},\n  {"id": 3, "status": "failed", "msg": "timeout", "x": 1.50}\n]';

  it('returns the matching items byte for byte', () => {
    const r = matchQuery(items, 'status=failed');
    expect(r).toMatchObject({ unit: 'items', matched: 2, total: 3, mode: 'all', fields: ['status'] });
    expect(r.content).toBe(
      '[{"id": 2, "status": "failed", "msg": "Disk full"},{"id": 3, "status": "failed", "msg": "timeout", "x": 1.50}]',
    );
    expect(JSON.parse(r.content)).toHaveLength(2);
  });

  it('needs every term, or falls back to any term when none matches all', () => {
    expect(matchQuery(items, 'failed disk').matched).toBe(1);
    const any = matchQuery(items, 'fine timeout');
    expect(any).toMatchObject({ matched: 2, mode: 'any' });
  });

  it('searches the largest array of an object', () => {
    const doc = '{"total": 3, "tags": ["a"], "results": [{"n": "a.ts"}, {"n": "b.ts"}, {"n": "c.py"}]}';
    const r = matchQuery(doc, '.ts');
    expect(r).toMatchObject({
      path: 'results',
      matched: 2,
      total: 3,
      content: '[{"n": "a.ts"},{"n": "b.ts"}]',
    });
  });

  it('matches nested fields and dotted paths', () => {
    const doc = '[{"user": {"name": "Ann"}, "id": 1}, {"user": {"name": "Bob"}, "id": 2}]';
    expect(matchQuery(doc, 'user.name=bob').content).toBe(
      '{"user": {"name": "Bob"}, "id": 2}'.replace(/^/, '[').replace(/$/, ']'),
    );
    expect(matchQuery(doc, 'name=ann').matched).toBe(1);
  });

  it('returns matching lines of text exactly', () => {
    const log = 'start\nWARN slow query\nERROR db down\nINFO ok\nERROR retry failed';
    const r = matchQuery(log, 'error');
    expect(r).toMatchObject({
      unit: 'lines',
      matched: 2,
      total: 5,
      content: 'ERROR db down\nERROR retry failed',
    });
  });

  it('copes with strings holding brackets, quotes and escapes', () => {
    const doc = '[{"a": "x ] , [ \\" }"}, {"a": "y"}]';
    expect(matchQuery(doc, 'y').content).toBe('[{"a": "y"}]');
    expect(matchQuery(doc, 'x').content).toBe('[{"a": "x ] , [ \\" }"}]');
  });
});
