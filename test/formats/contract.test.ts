import { describe, expect, it } from 'vitest';
import type { EngineOutput } from '../../src/engine/types.js';
import {
  chatFormat,
  FORMATS,
  formatForPath,
  messagesFormat,
  parseRequest,
  spliceRequest,
} from '../../src/formats/index.js';
import { createFakeCompress } from '../server/fake-engine.js';
import { chatBody, messagesBody } from './bodies.js';

/** The same contract for every provider format (STYLE.md: one suite, every implementation). */
const CASES = [
  {
    format: messagesFormat,
    body: messagesBody(),
    response: {
      content: [
        { type: 'text', text: 'let me look' },
        { type: 'tool_use', id: 'toolu_9', name: 'svc_retrieve', input: { hash: 'abc' } },
      ],
    },
    definitionKey: 'input_schema',
  },
  {
    format: chatFormat,
    body: chatBody(),
    response: {
      choices: [
        {
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_9',
                type: 'function',
                function: { name: 'svc_retrieve', arguments: '{"hash":"abc"}' },
              },
            ],
          },
        },
      ],
    },
    definitionKey: 'function',
  },
] as const;

describe.each(CASES)('format contract: $format.name', ({ format, body, response, definitionKey }) => {
  it('is found by its path', () => {
    expect(formatForPath(format.path)).toBe(format);
    expect(formatForPath(`${format.path}/`)).toBe(format);
    expect(FORMATS[format.name]).toBe(format);
  });

  it('parse -> identity engine -> splice gives undefined (forward the original)', () => {
    const parsed = parseRequest(format, body);
    const identity: EngineOutput = {
      result: {
        messages: parsed.messages.map((m) => ({ ...m })),
        tokens_before: 1,
        tokens_after: 1,
        tokens_saved: 0,
        compression_ratio: 1,
        transforms_applied: [],
        ccr_hashes: [],
      },
      ccrEntries: new Map(),
      messageOrigin: parsed.messages.map((_, i) => i),
      changed: new Set(),
    };
    expect(spliceRequest(format, JSON.stringify(body), parsed, identity)).toBeUndefined();
  });

  it('splice is deterministic and leaves every non-message field equal', () => {
    const text = JSON.stringify(body);
    const parsed = parseRequest(format, body);
    const fake = createFakeCompress();
    const a = spliceRequest(format, text, parsed, fake(parsed.messages, { model: 'm' }) as EngineOutput)!;
    const b = spliceRequest(format, text, parsed, fake(parsed.messages, { model: 'm' }) as EngineOutput)!;
    expect(a).toBe(b);
    const out = JSON.parse(a);
    for (const key of Object.keys(body))
      if (key !== 'messages') expect(out[key]).toEqual((body as Record<string, unknown>)[key]);
    expect(out.messages).toHaveLength((body.messages as unknown[]).length);
  });

  it('offers a tool, reads tool calls from a response and continues the conversation', () => {
    const def = format.toolDefinition({
      name: 'svc_retrieve',
      description: 'get it back',
      schema: { type: 'object' },
    }) as Record<string, unknown>;
    expect(def[definitionKey]).toBeDefined();
    const calls = format.toolCallsFromResponse(response);
    expect(calls).toEqual([
      { id: expect.stringMatching(/_9$/), name: 'svc_retrieve', input: { hash: 'abc' } },
    ]);
    const next = format.continuation(response, [{ id: calls[0]!.id, content: 'the original' }]);
    expect(JSON.stringify(next)).toContain('the original');
    expect(JSON.stringify(next)).toContain(calls[0]!.id);
    expect(format.toolCallsFromResponse({})).toEqual([]);
  });
});
