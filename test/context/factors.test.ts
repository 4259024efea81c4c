import { describe, expect, it } from 'vitest';
import { bm25Scores } from '../../src/engine/context/bm25.js';
import {
  errorFactor,
  recencyFactor,
  referenceFactor,
  salientTokens,
  similarityFactor,
  toinFactor,
} from '../../src/engine/context/factors.js';
import { scoreUnits } from '../../src/engine/context/scoring.js';
import { toolOutputShape } from '../../src/engine/context/shape.js';
import type { ContextUnit } from '../../src/engine/context/types.js';
import { buildUnits } from '../../src/engine/context/units.js';
import { DEFAULT_SCORE_WEIGHTS, parseScoreWeights } from '../../src/engine/context/weights.js';
import type { ChatMessage } from '../../src/engine/types.js';
import { assistant, call, filler, result, sys, user } from './helpers.js';

const unitsOf = (msgs: ChatMessage[]): ContextUnit[] => buildUnits(msgs, 0).filter((u) => !u.protected);

/** Two tool rounds that differ only in what the test varies, then the latest question. */
function pair(first: string, second: string, question = 'what next', firstTool = 'bash'): ChatMessage[] {
  return [
    sys('agent'),
    user('start'),
    call('c1', firstTool, { path: 'a' }),
    result('c1', first),
    call('c2', 'bash', { path: 'b' }),
    result('c2', second),
    assistant('ok'),
    user(question),
  ];
}

function scoresOf(msgs: ChatMessage[], toin?: Parameters<typeof scoreUnits>[2]['toin']): number[] {
  const cands = unitsOf(msgs).filter((u) => u.kind === 'tool');
  return scoreUnits(msgs, cands, { intelligent: true, weights: { ...DEFAULT_SCORE_WEIGHTS }, toin }).map(
    (s) => s.score,
  );
}

describe('recency', () => {
  it('ranks newer units higher', () => {
    const units = unitsOf(pair('x', 'x'));
    const r = recencyFactor(units);
    expect(r[0]).toBeLessThan(r[r.length - 1]!);
    const [older, newer] = scoresOf(pair(filler(1, 50), filler(1, 50)));
    expect(newer!).toBeGreaterThan(older!);
  });
});

describe('similarity (BM25)', () => {
  it('scores documents sharing rare query terms higher, never a constant', () => {
    const s = bm25Scores(
      ['the disk on /var is full', 'all tests pass', 'disk disk disk usage report'],
      'why is the disk full?',
    );
    expect(s[0]).toBeGreaterThan(0);
    expect(s[1]).toBe(0);
    expect(s[2]).toBeGreaterThan(0);
    expect(new Set(s).size).toBe(3);
    expect(
      similarityFactor(['nothing here', 'kubernetes pod crashloop'], 'pod crashloop').map((x) => x > 0),
    ).toEqual([false, true]);
  });

  it('moves the score of the unit that matches the latest user turn up', () => {
    const plain = filler(3, 80);
    const [matching, other] = scoresOf(
      pair(`${plain} postgres migration timeout`, plain, 'fix the postgres migration timeout'),
    );
    const [baseline, other2] = scoresOf(pair(plain, plain, 'fix the postgres migration timeout'));
    expect(matching!).toBeGreaterThan(baseline!);
    expect(other).toBeCloseTo(other2!, 6);
  });
});

describe('errors', () => {
  it('detects errors, stack traces and non-zero exit codes, not their absence', () => {
    expect(errorFactor('all good\n0 errors')).toBe(0);
    expect(errorFactor('Error: ENOENT: no such file')).toBeGreaterThan(0);
    expect(errorFactor('    at main (src/app.ts:10:5)\n    at run (src/run.ts:3:1)')).toBeGreaterThan(
      errorFactor('    at main (src/app.ts:10:5)'),
    );
    expect(errorFactor('process exited with code 2')).toBeGreaterThan(0);
    expect(errorFactor('exit code 0')).toBe(0);
  });

  it('moves the score of a unit with a traceback up', () => {
    const plain = filler(4, 80);
    const [withError] = scoresOf(
      pair(`${plain}\nTraceback (most recent call last):\n  File "app.py", line 3\nValueError: bad`, plain),
    );
    const [without] = scoresOf(pair(plain, plain));
    expect(withError!).toBeGreaterThan(without!);
  });
});

describe('forward references', () => {
  it('counts identifiers and paths of a unit that later messages mention', () => {
    expect([...salientTokens('edit src/server/app.ts and call parseConfigFile with id 8f3a9c21')]).toEqual(
      expect.arrayContaining(['src/server/app.ts', 'parseConfigFile', '8f3a9c21']),
    );
    const msgs = pair('defines parseConfigFile in src/config.ts', 'unrelated words here');
    const units = unitsOf(msgs).filter((u) => u.kind === 'tool');
    const tokens = msgs.map((m) => salientTokens(typeof m.content === 'string' ? m.content : ''));
    const before = referenceFactor(units, tokens);
    const later = [...msgs, user('now change parseConfigFile in src/config.ts')];
    const after = referenceFactor(
      units,
      later.map((m) => salientTokens(typeof m.content === 'string' ? m.content : '')),
    );
    expect(before[0]).toBe(0);
    expect(after[0]!).toBeGreaterThan(0);
    expect(after[1]).toBe(0);
  });

  it('moves the score of a referenced unit up', () => {
    const plain = filler(5, 80);
    const referenced = [
      ...pair(`${plain} handler at src/routes/billing_export.ts`, plain).slice(0, -1),
      user('open src/routes/billing_export.ts'),
    ];
    const unreferenced = [
      ...pair(`${plain} handler at src/routes/billing_export.ts`, plain).slice(0, -1),
      user('open the readme'),
    ];
    expect(scoresOf(referenced)[0]!).toBeGreaterThan(scoresOf(unreferenced)[0]!);
  });
});

describe('TOIN importance', () => {
  it('moves the score of an often-retrieved shape up and a never-retrieved one down', () => {
    const output = JSON.stringify([{ id: 1, status: 'ok' }]);
    const msgs = pair(output, filler(6, 20), 'what next', 'list_jobs');
    const shape = toolOutputShape('list_jobs', output);
    const unit = unitsOf(msgs).find((u) => u.kind === 'tool')!;
    expect(toinFactor(msgs, unit, undefined)).toBe(0.5);
    const high = { shapes: { [shape.key]: { importance: 0.95, keepFactor: 2 } } };
    const low = { shapes: { [shape.key]: { importance: 0.2, keepFactor: 0.7 } } };
    expect(toinFactor(msgs, unit, high)).toBe(0.95);
    const neutral = scoresOf(msgs)[0]!;
    expect(scoresOf(msgs, high)[0]!).toBeGreaterThan(neutral);
    expect(scoresOf(msgs, low)[0]!).toBeLessThan(neutral);
  });

  it('shapes depend on field names and types, not values', () => {
    const a = toolOutputShape('t', '[{"id":1,"name":"x"}]');
    expect(toolOutputShape('t', '[{"id":2,"name":"yy"}]').key).toBe(a.key);
    expect(toolOutputShape('t', '[{"id":"2","name":"yy"}]').key).not.toBe(a.key);
    expect(toolOutputShape('u', '[{"id":1,"name":"x"}]').key).not.toBe(a.key);
    expect(a.fields).toEqual(['id', 'name']);
  });
});

describe('weights', () => {
  it('parses and validates --score-weights', () => {
    expect(parseScoreWeights('recency=2, errors=0')).toMatchObject({ recency: 2, errors: 0, similarity: 1 });
    expect(() => parseScoreWeights('speed=1')).toThrow(/recency, similarity/);
    expect(() => parseScoreWeights('recency=-1')).toThrow(/>= 0/);
    expect(() => parseScoreWeights('recency=0,similarity=0,toin=0,errors=0,references=0')).toThrow(
      /at least one/,
    );
  });

  it('a factor with weight 0 no longer moves the score', () => {
    const plain = filler(4, 80);
    const err = pair(`${plain}\nError: boom`, plain);
    const ok = pair(plain, plain);
    const weights = { ...DEFAULT_SCORE_WEIGHTS, errors: 0 };
    const s = (m: ChatMessage[]) =>
      scoreUnits(
        m,
        unitsOf(m).filter((u) => u.kind === 'tool'),
        { intelligent: true, weights },
      )[0]!.score;
    expect(s(err)).toBeCloseTo(s(ok), 6);
  });

  it('position-based scoring ignores everything but position', () => {
    const plain = filler(4, 80);
    const m = pair(`${plain}\nError: boom`, plain);
    const s = scoreUnits(
      m,
      unitsOf(m).filter((u) => u.kind === 'tool'),
      { intelligent: false, weights: { ...DEFAULT_SCORE_WEIGHTS } },
    );
    expect(s.map((x) => x.score)).toEqual([0, 1]);
  });
});
