import { describe, expect, it } from 'vitest';
import { withoutTaskLabels } from '../../src/engine/compressors/lines.js';
import { isNameLike } from '../../src/engine/identifiers.js';
import { compressMessages } from '../../src/engine/index.js';
import { detectContentType } from '../../src/engine/router.js';
import type { ChatMessage } from '../../src/engine/types.js';

/** A synthetic monorepo test run: every line behind a task runner's `pkg:task: ` label. */
function monorepoRun(label = '@acme/widgets:test: '): string {
  const body = [
    '  55 |     const w = makeWidget({ size: 3 })',
    '  56 |     expect(w.render()).toBe("ok")',
    '                              ^',
    'error: expect(received).toBe(expected)',
    '',
    'Expected: "ok"',
    'Received: "broken"',
    '',
    '      at <anonymous> (/home/dev/acme/packages/widgets/src/widget.spec.ts:56:24)',
    '(fail) widgets > render > draws the frame [12.40ms]',
    '',
  ];
  const topics = ['layout', 'colour', 'border', 'padding', 'shadow', 'cursor', 'focus', 'resize'];
  for (const [t, topic] of topics.entries())
    for (let k = 0; k < 4; k++)
      body.push(
        `(pass) widgets > ${topic} > handles case_${topic}_${k} with option opt${k} [${(t + k * 0.37).toFixed(2)}ms]`,
      );
  body.push('', ' 32 pass', ' 1 fail', ' 80 expect() calls', 'Ran 33 tests across 4 files. [1.92s]');
  body.push('error: script "test" exited with code 1');
  const out = body.map((l) => `${label}${l}`.trimEnd());
  out.push(
    '',
    ' Tasks:    11 successful, 12 total',
    'Failed:    @acme/widgets#test',
    '',
    ' ERROR  run failed: command  exited (1)',
  );
  return out.join('\n');
}

function conversation(output: string): ChatMessage[] {
  return [
    { role: 'user', content: 'run the checks' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'call_1',
          type: 'function',
          function: {
            name: 'Bash',
            arguments: JSON.stringify({ command: 'bun run verify 2>&1 | tail -60' }),
          },
        },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: output },
    { role: 'user', content: 'go on' },
  ] as ChatMessage[];
}

describe('task runner output (labelled lines)', () => {
  it('strips a recurring label for classification, and nothing else', () => {
    const lines = ['pkg:build: ERROR x', 'pkg:build: at y', 'pkg:build:', 'pkg:build: done', 'plain'];
    expect(withoutTaskLabels(lines)).toEqual(['ERROR x', 'at y', '', 'done', 'plain']);
    // grep hits (`file:12: `) and key: value listings carry no recurring label
    const grep = ['src/a.ts:12: foo', 'src/a.ts:14: bar', 'src/a.ts:20: baz'];
    expect(withoutTaskLabels(grep)).toBe(grep);
    const listing = ['name: a', 'size: 3', 'owner: b', 'mode: 644'];
    expect(withoutTaskLabels(listing)).toBe(listing);
  });

  it('is detected as a log', () => {
    expect(detectContentType(monorepoRun())).toBe('log');
  });

  it('keeps the failing assertion, its top stack frame and the failed test', () => {
    const out = compressMessages(conversation(monorepoRun()), { model: 'gpt-4o' });
    const text = out.result.messages[2]!.content as string;
    expect(text).toMatch(/\[svc: \d+ lines omitted/); // it was compressed
    expect(text).toContain('error: expect(received).toBe(expected)');
    expect(text).toContain('Received: "broken"');
    expect(text).toContain('src/widget.spec.ts:56:24)');
    expect(text).toContain('(fail) widgets > render > draws the frame');
  });

  it('lists no durations among the omitted part mentions', () => {
    const out = compressMessages(conversation(monorepoRun()), { model: 'gpt-4o' });
    const text = out.result.messages[2]!.content as string;
    const index = /\[svc: omitted part mentions: ([^\]]*)\]/.exec(text)?.[1] ?? '';
    expect(index).not.toMatch(/\d(?:ms|s)\b/);
  });

  it('isNameLike: a number with a unit is a measurement, not a name', () => {
    for (const no of ['12.40ms', '1.92s', '300KB', '5970.64ms', '128MiB', '250us'])
      expect(isNameLike(no)).toBe(false);
    for (const yes of ['opt1.ms', 'case_1ms', 's3://bucket', 'v1.5s-beta'])
      expect(isNameLike(yes)).toBe(true);
  });
});
