import { describe, expect, it } from 'vitest';
import type { EngineOutput } from '../../src/engine/types.js';
import {
  chatFormat,
  DEFAULT_FORMAT,
  FORMATS,
  type FormatName,
  formatForPassthrough,
  formatForPath,
  messagesFormat,
  parseRequest,
  type SseEvent,
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
    upstream: 'https://anthropic.test/v1',
    usageBody: { usage: { input_tokens: 10, output_tokens: 2 } },
    sse: {
      final: { event: 'message_stop', data: '{"type":"message_stop"}' },
      error: { event: 'error', data: '{"type":"error","error":{"type":"overloaded_error"}}' },
      data: { event: 'ping', data: '{"type":"ping"}' },
      usage: [
        [
          'message_start',
          '{"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1}}}',
        ],
        ['message_delta', '{"type":"message_delta","usage":{"output_tokens":2}}'],
      ],
      // one round: text, then a call of svc's tool
      round: [
        ['message_start', '{"type":"message_start","message":{"id":"m1","usage":{"input_tokens":1}}}'],
        [
          'content_block_start',
          '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
        ],
        [
          'content_block_delta',
          '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"let me look"}}',
        ],
        ['content_block_stop', '{"type":"content_block_stop","index":0}'],
        [
          'content_block_start',
          '{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_9","name":"svc_retrieve","input":{}}}',
        ],
        [
          'content_block_delta',
          '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"hash\\":\\"abc\\"}"}}',
        ],
        ['content_block_stop', '{"type":"content_block_stop","index":1}'],
        [
          'message_delta',
          '{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}',
        ],
        ['message_stop', '{"type":"message_stop"}'],
      ],
    },
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
    upstream: 'https://openai.test/v1',
    usageBody: { usage: { prompt_tokens: 10, completion_tokens: 2 } },
    sse: {
      final: { event: undefined, data: '[DONE]' },
      error: { event: undefined, data: '{"error":{"message":"overloaded"}}' },
      data: { event: undefined, data: '{"id":"c1","choices":[{"delta":{"content":"hi"}}]}' },
      usage: [
        [undefined, '{"id":"c1","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2}}'],
        [undefined, '[DONE]'],
      ],
      round: [
        [
          undefined,
          '{"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":"let me look"}}]}',
        ],
        [
          undefined,
          '{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_9","type":"function","function":{"name":"svc_retrieve","arguments":""}}]}}]}',
        ],
        [
          undefined,
          '{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"hash\\":\\"abc\\"}"}}]}}]}',
        ],
        [undefined, '{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}'],
        [undefined, '[DONE]'],
      ],
    },
  },
] as const;

const URLS = { messagesApiUrl: 'https://anthropic.test/v1', compatApiUrl: 'https://openai.test/v1' };

function sseEvent(event: string | undefined, data: string): SseEvent {
  return { raw: `${event ? `event: ${event}\n` : ''}data: ${data}\n\n`, event, data };
}

async function* eventsOf(
  list: ReadonlyArray<readonly [string | undefined, string]>,
): AsyncGenerator<SseEvent> {
  for (const [event, data] of list) yield sseEvent(event, data);
}

it('every registered format is under the contract', () => {
  expect(CASES.map((c) => c.format.name).sort()).toEqual(Object.keys(FORMATS).sort() as FormatName[]);
});

it('a /v1 request no format parses goes to the format that claims it, else the default', () => {
  expect(formatForPassthrough('/v1/messages/count_tokens', {})).toBe(messagesFormat);
  expect(formatForPassthrough('/v1/models', { 'anthropic-version': '2023-06-01' })).toBe(messagesFormat);
  expect(formatForPassthrough('/v1/models', {})).toBe(DEFAULT_FORMAT);
});

describe.each(CASES)(
  'format contract: $format.name',
  ({ format, body, response, definitionKey, upstream, usageBody, sse }) => {
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

    it('names its upstream', () => {
      expect(format.upstreamUrl(URLS)).toBe(upstream);
    });

    it('reads usage from a JSON response and from its stream', () => {
      expect(format.usageFromJson(usageBody)).toMatchObject({ input: 10, output: 2 });
      expect(format.usageFromJson({})).toBeUndefined();
      const reader = format.createSseUsageReader();
      for (const [event, data] of sse.usage) reader.onEvent(event, data);
      expect(reader.usage()).toMatchObject({ input: 10, output: 2 });
    });

    it('shapes svc errors: a body holding the message, a type per status', () => {
      const err = {
        code: 'SVC_BAD_INPUT',
        status: 400,
        message: 'messages must be an array',
        details: { field: 'messages' },
      };
      const out = JSON.stringify(
        format.errorBody(format.errorType(400), err.message, format.svcErrorFields(err)),
      );
      expect(out).toContain('messages must be an array');
      expect(out).toContain('invalid_request_error');
      expect(format.errorType(429)).toBe('rate_limit_error');
      expect(format.errorType(502)).toMatch(/error$/);
    });

    it("finds, answers and removes calls of svc's own tool", () => {
      const own = format.ownToolCalls(response as Record<string, unknown>, 'svc_retrieve');
      expect(own.calls).toEqual([{ id: expect.stringMatching(/_9$/), input: { hash: 'abc' } }]);
      expect(format.ownToolCalls(response as Record<string, unknown>, 'other_tool').calls).toEqual([]);
      const without = format.withoutOwnToolCalls(response as Record<string, unknown>, 'svc_retrieve');
      expect(format.toolCallsFromResponse(without)).toEqual([]);
      const results = format.toolResults([{ id: own.calls[0]!.id, text: 'the original', error: false }]);
      expect(JSON.stringify(results)).toContain('the original');
      expect(JSON.stringify(results)).toContain(own.calls[0]!.id);
    });

    it('tells how its stream ends', () => {
      expect(format.classifySseEvent(sse.final)).toBe('final');
      expect(format.classifySseEvent(sse.error)).toBe('error');
      expect(format.classifySseEvent(sse.data)).toBe('data');
    });

    it("relays a streamed round: svc's tool call is read, not shown; a last round is shown without it", async () => {
      const written: string[] = [];
      const write = async (text: string) => void written.push(text);
      const relay = format.createStreamRelay('svc_retrieve');
      const round = await relay.round(eventsOf(sse.round), false, write);
      expect(round.calls).toEqual([{ id: expect.stringMatching(/_9$/), input: { hash: 'abc' } }]);
      expect(written.join('')).toContain('let me look');
      expect(written.join('')).not.toContain('svc_retrieve');
      const shown: string[] = [];
      const last = await format
        .createStreamRelay('svc_retrieve')
        .round(eventsOf(sse.round), true, async (t) => void shown.push(t));
      expect(last.calls).toEqual([]);
      expect(shown.join('')).not.toContain('svc_retrieve');
    });
  },
);
