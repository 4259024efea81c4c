/// <reference types="vite/client" />
import { describe, expect, it } from 'vitest';
import type { EngineOutput } from '../../src/engine/types.js';
import {
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
import type { ContractCase } from './contract-case.js';

/**
 * The same contract for every provider format (STYLE.md: one suite, every
 * implementation): each format's case is `test/formats/<format>/contract-case.ts`.
 */
const CASES = Object.values(
  import.meta.glob<{ contractCase: ContractCase }>('./*/contract-case.ts', { eager: true }),
).map((m) => m.contractCase);

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
      const list = format.messagesPath[0] as string;
      const parsed = parseRequest(format, body);
      const fake = createFakeCompress();
      const a = spliceRequest(format, text, parsed, fake(parsed.messages, { model: 'm' }) as EngineOutput)!;
      const b = spliceRequest(format, text, parsed, fake(parsed.messages, { model: 'm' }) as EngineOutput)!;
      expect(a).toBe(b);
      const out = JSON.parse(a);
      for (const key of Object.keys(body))
        if (key !== list) expect(out[key]).toEqual((body as Record<string, unknown>)[key]);
      expect(out[list]).toHaveLength((body[list] as unknown[]).length);
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
