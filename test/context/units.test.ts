import { describe, expect, it } from 'vitest';
import { buildUnits } from '../../src/engine/context/units.js';
import { assistant, call, result, sys, user } from './helpers.js';

describe('buildUnits', () => {
  const msgs = [
    sys('s'),
    user('q1'),
    assistant('a1'),
    user('q2'),
    call('c1', 'bash', { cmd: 'ls' }),
    result('c1', 'out'),
    user('reminder in the same provider message'),
    assistant('done'),
    user('q3'),
  ];

  it('groups tool calls with their results, user messages with their answer, the rest single', () => {
    const units = buildUnits(msgs, 0);
    expect(units.map((u) => [u.kind, u.start, u.end])).toEqual([
      ['system', 0, 1],
      ['turn', 1, 3],
      ['single', 3, 4],
      ['tool', 4, 7],
      ['single', 7, 8],
      ['single', 8, 9],
    ]);
  });

  it('protects the system prompt, the latest user message, the final unit and the last N turns', () => {
    const none = buildUnits(msgs, 0)
      .filter((u) => u.protected)
      .map((u) => u.start);
    expect(none).toEqual([0, 8]);
    const two = buildUnits(msgs, 2)
      .filter((u) => u.protected)
      .map((u) => u.start);
    expect(two).toEqual([0, 7, 8]);
    const older = [...msgs.slice(0, 4), call('c9', 'x', {}), result('c9', 'y'), assistant('z')];
    expect(
      buildUnits(older, 0)
        .filter((u) => u.protected)
        .map((u) => u.start),
    ).toEqual([0, 3, 4, 6]);
    // 4: after the latest user message, with no tool output before it to hold a marker
  });

  it('after the latest user message, protects the units whose previous unit ends with no tool output', () => {
    const work = [
      sys('s'),
      user('task'),
      call('c1', 'bash', {}),
      result('c1', 'one'),
      call('c2', 'bash', {}),
      result('c2', 'two'),
      assistant('thinking aloud'),
      call('c3', 'bash', {}),
      result('c3', 'three'),
      call('c4', 'bash', {}),
      result('c4', 'four'),
    ];
    const open = buildUnits(work, 0)
      .filter((u) => !u.protected)
      .map((u) => u.start);
    // 2 follows the user message, 7 follows an assistant message: a marker before them would be a user message
    expect(open).toEqual([4, 6]);
  });

  it('keeps parallel tool results with their call', () => {
    const parallel = [
      user('go'),
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } },
          { id: 'b', type: 'function', function: { name: 'g', arguments: '{}' } },
        ],
      },
      result('a', '1'),
      result('b', '2'),
      assistant('ok'),
    ];
    const units = buildUnits(parallel, 0);
    expect(units.find((u) => u.kind === 'tool')).toMatchObject({ start: 1, end: 4 });
  });
});
