import { describe, expect, it } from 'vitest';
import { parseMarkers } from '../../src/engine/markers.js';
import type { ChatMessage, EngineOutput } from '../../src/engine/types.js';
import { messagesFormat, parseRequest, spliceRequest, UnspliceableError } from '../../src/formats/index.js';
import { createFakeCompress } from '../server/fake-engine.js';
import { messagesBody } from './bodies.js';

// Pretty-printed, with a 20-digit integer JSON.parse cannot hold: untouched bytes must survive.
const TEXT = JSON.stringify(messagesBody(), null, 2).replace(
  '"cmd": "npm test"',
  '"cmd": "npm test", "big": 12345678901234567890',
);
const BODY = JSON.parse(TEXT);
const fake = createFakeCompress();

function engine(messages: ChatMessage[]): EngineOutput {
  return fake(messages, { model: 'claude-sonnet-4-5' }) as EngineOutput;
}

describe('messages format: parse', () => {
  const parsed = parseRequest(messagesFormat, BODY);

  it('reads the same body object as the same request (the body parser gives it again for the same body)', () => {
    const again = parseRequest(messagesFormat, BODY);
    expect(again).toBe(parsed);
    expect(again.messages[0]).toBe(parsed.messages[0]);
    // an equal body in another object is read anew, to the same result
    const copy = parseRequest(messagesFormat, JSON.parse(TEXT));
    expect(copy).not.toBe(parsed);
    expect(copy.messages).toEqual(parsed.messages);
  });

  it('reads model, stream and max_tokens', () => {
    expect(parsed).toMatchObject({
      format: 'messages',
      model: 'claude-sonnet-4-5',
      stream: false,
      maxTokens: 1024,
    });
  });

  it('maps system, tool_use -> tool_calls, tool_result -> tool messages, other blocks -> opaque parts', () => {
    const roles = parsed.messages.map((m) => m.role);
    expect(roles).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'user',
      'assistant',
      'user',
    ]);
    const assistant = parsed.messages[2]!;
    expect(assistant.tool_calls).toEqual([
      {
        id: 'toolu_01',
        type: 'function',
        function: { name: 'bash', arguments: JSON.stringify(BODY.messages[1].content[2].input) },
      },
    ]);
    // thinking block reaches the engine as the original object, signature and all
    expect((assistant.content as unknown[])[0]).toBe(BODY.messages[1].content[0]);
    expect(parsed.messages[3]).toEqual({
      role: 'tool',
      tool_call_id: 'toolu_01',
      content: BODY.messages[2].content[0].content,
    });
    expect(parsed.messages[5]!.content).toEqual([
      { type: 'text', text: BODY.messages[4].content[0].content[0].text },
      BODY.messages[4].content[0].content[1],
    ]);
    expect(parsed.messages[6]!.content).toEqual([
      { type: 'text', text: 'small note' },
      BODY.messages[4].content[2],
    ]);
    expect(parsed.origins.map((o) => o.message)).toEqual([-1, 0, 1, 2, 3, 4, 4, 5, 6]);
  });

  it('system as a string', () => {
    const p = parseRequest(messagesFormat, {
      model: 'm',
      system: 'be brief',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(p.messages[0]).toEqual({ role: 'system', content: 'be brief' });
  });

  it.each([
    [{ model: 'm' }, 'messages'],
    [{ messages: [{ content: 'x' }] }, 'messages[0]'],
    [{ messages: [{ role: 'user', content: 5 }] }, 'messages[0].content'],
    [{ messages: [{ role: 'user', content: ['x'] }] }, 'messages[0].content[0]'],
    [{ system: 3, messages: [] }, 'system'],
  ])('rejects a malformed body naming the field (%j)', (body, field) => {
    expect(() => parseRequest(messagesFormat, body)).toThrow(
      expect.objectContaining({ code: 'SVC_BAD_INPUT', details: { field } }),
    );
  });
});

describe('messages format: splice', () => {
  const parsed = parseRequest(messagesFormat, BODY);

  it('nothing changed: undefined (forward the original bytes)', () => {
    const identity: EngineOutput = {
      result: {
        messages: parsed.messages,
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
    expect(spliceRequest(messagesFormat, TEXT, parsed, identity)).toBeUndefined();
  });

  it('changes only the compressed tool_result text; every other block keeps its bytes', () => {
    const out = spliceRequest(messagesFormat, TEXT, parsed, engine(parsed.messages))!;
    const body = JSON.parse(out);
    // the two long tool outputs became markers, redeemable by hash
    const first = body.messages[2].content[0];
    expect(first.content).toMatch(/^FAKEtest outp/);
    expect(parseMarkers(first.content)).toHaveLength(1);
    expect(first.cache_control).toEqual({ type: 'ephemeral' });
    expect(Object.keys(first)).toEqual(['type', 'tool_use_id', 'content', 'cache_control']);
    expect(body.messages[4].content[0].content[0].text).toMatch(/^FAKElog line 0/);
    // untouched blocks keep their exact original text
    expect(out).toContain('"signature": "EqQBCkYIARABGAIiQL+sig/=="');
    expect(out).toContain('"big": 12345678901234567890');
    expect(out).toContain('"data": "iVBORw0KGgo="');
    expect(out.length).toBeLessThan(TEXT.length);
    // only the two compressed strings differ: removing them from both texts leaves identical bytes
    const strip = (s: string) => s.replace(/"(content|text)": "(test output|log|FAKE)[^"]*"/g, '');
    expect(strip(out)).toBe(strip(TEXT));
  });

  it('drops a tool pair as a unit and inserts the engine marker before the next kept message', () => {
    const output = engine(parsed.messages);
    // drop chat messages 4 (assistant with toolu_02) and 5 (its tool_result), insert a marker
    const keep = [0, 1, 2, 3, 6, 7, 8];
    const messages = [...keep.slice(0, 4), -1, ...keep.slice(4)].map((i) =>
      i < 0
        ? {
            role: 'user',
            content: '[svc: 2 messages omitted; retrieve with svc_retrieve hash=aaaaaaaaaaaaaaaaaaaaaaaa]',
          }
        : output.result.messages[i]!,
    );
    const out = spliceRequest(messagesFormat, TEXT, parsed, {
      ...output,
      result: { ...output.result, messages },
      messageOrigin: [...keep.slice(0, 4), -1, ...keep.slice(4)],
    })!;
    const body = JSON.parse(out);
    expect(body.messages.map((m: { role: string }) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'user',
      'assistant',
      'user',
    ]);
    // roles must alternate: the marker joins the previous user message, after its tool results
    expect(body.messages[2].content).toEqual([
      expect.objectContaining({ type: 'tool_result', tool_use_id: 'toolu_01' }),
      { type: 'text', text: expect.stringMatching(/^\[svc: 2 messages omitted/) },
    ]);
    // the user message that held the dropped tool_result keeps its other blocks, byte for byte
    expect(body.messages[3].content).toEqual([BODY.messages[4].content[1], BODY.messages[4].content[2]]);
    expect(out).not.toContain('toolu_02');
  });

  it('throws UnspliceableError when the engine changes an opaque block', () => {
    const output = engine(parsed.messages);
    const messages = output.result.messages.slice();
    const assistant = messages[2]!;
    messages[2] = {
      ...assistant,
      content: [
        { type: 'thinking', thinking: 'changed', signature: 'x' },
        (assistant.content as unknown[])[1] as never,
      ],
    };
    expect(() =>
      spliceRequest(messagesFormat, TEXT, parsed, { ...output, result: { ...output.result, messages } }),
    ).toThrow(UnspliceableError);
  });
});

describe('messages format: usage', () => {
  it('from a JSON response', () => {
    expect(
      messagesFormat.usageFromJson({
        usage: {
          input_tokens: 10,
          output_tokens: 5,
          cache_read_input_tokens: 100,
          cache_creation_input_tokens: 7,
        },
      }),
    ).toEqual({ input: 10, output: 5, cacheRead: 100, cacheWrite: 7 });
    expect(messagesFormat.usageFromJson({ content: [] })).toBeUndefined();
  });

  it('reads the cache writes split by TTL (5-minute and 1-hour), JSON and SSE alike', () => {
    const usage = {
      input_tokens: 10,
      output_tokens: 5,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 700,
      cache_creation: { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 500 },
    };
    const expected = { input: 10, output: 5, cacheRead: 100, cacheWrite: 700, cacheWrite1h: 500 };
    expect(messagesFormat.usageFromJson({ usage })).toEqual(expected);
    const reader = messagesFormat.createSseUsageReader();
    reader.onEvent('message_start', JSON.stringify({ type: 'message_start', message: { usage } }));
    expect(reader.usage()).toEqual(expected);
    // Only the split given: the total is its sum.
    const { cache_creation_input_tokens: _total, ...splitOnly } = usage;
    expect(messagesFormat.usageFromJson({ usage: splitOnly })).toEqual(expected);
  });

  it('from SSE message_start + message_delta (cumulative output)', () => {
    const reader = messagesFormat.createSseUsageReader();
    reader.onEvent(
      'message_start',
      JSON.stringify({
        type: 'message_start',
        message: { usage: { input_tokens: 25, output_tokens: 1, cache_read_input_tokens: 3 } },
      }),
    );
    reader.onEvent('content_block_delta', '{"type":"content_block_delta"}');
    reader.onEvent('message_delta', JSON.stringify({ type: 'message_delta', usage: { output_tokens: 15 } }));
    reader.onEvent('ping', 'not json');
    expect(reader.usage()).toEqual({ input: 25, output: 15, cacheRead: 3, cacheWrite: 0 });
  });
});
