import { describe, expect, it } from 'vitest';
import { parseMarkers } from '../../src/engine/markers.js';
import type { EngineOutput } from '../../src/engine/types.js';
import { chatFormat, createSseTap, parseRequest, spliceRequest } from '../../src/formats/index.js';
import { createFakeCompress } from '../server/fake-engine.js';
import { chatBody } from './bodies.js';

const TEXT = JSON.stringify(chatBody()).replace(
  '"temperature":0.2',
  '"temperature":0.20,"seed":12345678901234567890',
);
const BODY = JSON.parse(TEXT);
const fake = createFakeCompress();

describe('chat format', () => {
  const parsed = parseRequest(chatFormat, BODY);

  it('passes the original message objects to the engine', () => {
    expect(parsed).toMatchObject({ format: 'chat', model: 'gpt-4o', stream: false, maxTokens: undefined });
    for (const [i, m] of parsed.messages.entries()) expect(m).toBe(BODY.messages[i]);
    expect(parsed.origins[1]!.parts).toEqual([
      ['messages', 1, 'content', 0],
      ['messages', 1, 'content', 1],
    ]);
  });

  it('reads max_completion_tokens before max_tokens', () => {
    const p = parseRequest(chatFormat, { model: 'm', max_tokens: 5, max_completion_tokens: 9, messages: [] });
    expect(p.maxTokens).toBe(9);
  });

  it('splices only the tool message content; tool_calls, parts and the rest keep their bytes', () => {
    const output = fake(parsed.messages, { model: 'gpt-4o' }) as EngineOutput;
    const out = spliceRequest(chatFormat, TEXT, parsed, output)!;
    const body = JSON.parse(out);
    expect(body.messages[3].content).toMatch(/^FAKEapp log li/);
    expect(parseMarkers(body.messages[3].content)[0]!.hash).toBe(output.result.ccr_hashes[0]);
    expect(body.messages[2]).toEqual(BODY.messages[2]);
    const strip = (s: string) => s.replace(/"content":"(app log|FAKE)[^"]*"/, '');
    expect(strip(out)).toBe(strip(TEXT));
    expect(out).toContain('"temperature":0.20,"seed":12345678901234567890');
  });

  it('splices a text part inside a content array', () => {
    const body = {
      model: 'gpt-4o',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'x'.repeat(300) },
            { type: 'image_url', image_url: { url: 'u' } },
          ],
        },
        { role: 'user', content: 'q' },
      ],
    };
    const text = JSON.stringify(body);
    const p = parseRequest(chatFormat, body);
    const out = JSON.parse(
      spliceRequest(chatFormat, text, p, fake(p.messages, { model: 'gpt-4o' }) as EngineOutput)!,
    );
    expect(out.messages[0].content[0].text).toMatch(/^FAKExxxx/);
    expect(out.messages[0].content[1]).toEqual(body.messages[0]!.content[1]);
  });

  it('usage from JSON: cached tokens split out of prompt_tokens', () => {
    expect(
      chatFormat.usageFromJson({
        usage: { prompt_tokens: 100, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 60 } },
      }),
    ).toEqual({ input: 40, output: 20, cacheRead: 60, cacheWrite: 0 });
  });

  it('usage from the final SSE usage chunk, fed in arbitrary splits', () => {
    const stream =
      'data: {"id":"1","choices":[{"delta":{"content":"hi"}}],"usage":null}\n\n' +
      'data: {"id":"1","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3}}\n\n' +
      'data: [DONE]\n\n';
    const tap = createSseTap(chatFormat);
    for (let i = 0; i < stream.length; i += 7) tap.feed(stream.slice(i, i + 7));
    expect(tap.usage()).toEqual({ input: 12, output: 3, cacheRead: 0, cacheWrite: 0 });
    const none = createSseTap(chatFormat);
    none.feed('data: {"choices":[]}\n\ndata: [DONE]\n\n');
    expect(none.usage()).toBeUndefined();
  });
});
