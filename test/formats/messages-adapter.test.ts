import { describe, expect, it } from 'vitest';
import type { ChatMessage, EngineOutput } from '../../src/engine/types.js';
import { messagesFormat, parseRequest, spliceRequest } from '../../src/formats/index.js';

// These cases were written for the converter `svc compress` had of its own;
// `svc compress` now reads and writes through formats/ like the proxy.
type MessagesFormatMessage = { role: string; content: string | Array<Record<string, unknown>> };

const thinking = { type: 'thinking', thinking: 'plan', signature: 'sig-abc' };
const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } };
const conversation = (): MessagesFormatMessage[] => [
  { role: 'user', content: 'Why is checkout failing?' },
  {
    role: 'assistant',
    content: [
      thinking,
      { type: 'text', text: 'Listing orders.' },
      { type: 'tool_use', id: 'toolu_1', name: 'http_get', input: { url: '/v1/orders' } },
    ],
  },
  {
    role: 'user',
    content: [
      {
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: 'BIG OUTPUT',
        cache_control: { type: 'ephemeral' },
      },
      { type: 'text', text: 'Also look at this screenshot.' },
      image,
    ],
  },
  { role: 'assistant', content: [{ type: 'text', text: 'Noted.' }] },
  { role: 'user', content: 'What failed?' },
];
const parse = (messages: MessagesFormatMessage[], system?: string) => {
  const body = { ...(system === undefined ? {} : { system }), messages };
  return { text: JSON.stringify(body), parsed: parseRequest(messagesFormat, body) };
};
const output = (messages: ChatMessage[], messageOrigin: number[]): EngineOutput => ({
  result: {
    messages,
    tokens_before: 1,
    tokens_after: 1,
    tokens_saved: 0,
    compression_ratio: 1,
    transforms_applied: [],
    ccr_hashes: [],
  },
  ccrEntries: new Map(),
  messageOrigin,
  changed: new Set(),
});
const messagesOf = (text: string | undefined) => JSON.parse(text!).messages as MessagesFormatMessage[];

describe('messages-format adapter (formats/messages, as svc compress uses it)', () => {
  it('converts blocks to chat: system first, tool_use to tool_calls, tool_result to tool messages', () => {
    const chat = parse(conversation(), 'You are an agent.').parsed.messages;
    expect(chat.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'user',
      'assistant',
      'user',
    ]);
    expect(chat[0]).toEqual({ role: 'system', content: 'You are an agent.' });
    expect(chat[2]!.tool_calls).toEqual([
      { id: 'toolu_1', type: 'function', function: { name: 'http_get', arguments: '{"url":"/v1/orders"}' } },
    ]);
    expect(chat[2]!.content).toEqual([thinking, { type: 'text', text: 'Listing orders.' }]);
    expect(chat[3]).toEqual({ role: 'tool', tool_call_id: 'toolu_1', content: 'BIG OUTPUT' });
    expect(chat[4]!.content).toEqual([{ type: 'text', text: 'Also look at this screenshot.' }, image]);
  });

  it('leaves the body as it was when nothing changed (the original bytes go)', () => {
    const { text, parsed } = parse(conversation(), 'sys');
    const chat = parsed.messages;
    expect(
      spliceRequest(
        messagesFormat,
        text,
        parsed,
        output(
          chat,
          chat.map((_, i) => i),
        ),
      ),
    ).toBeUndefined();
  });

  it('splices a changed tool result into its block and keeps every other block as it was', () => {
    const original = conversation();
    const { text, parsed } = parse(original);
    const out = parsed.messages.map((m) =>
      m.role === 'tool' ? { ...m, content: 'SMALL [svc: 9 items omitted]' } : m,
    );
    const back = messagesOf(
      spliceRequest(
        messagesFormat,
        text,
        parsed,
        output(
          out,
          out.map((_, i) => i),
        ),
      ),
    );
    const blocks = back[2]!.content as Array<Record<string, unknown>>;
    expect(blocks[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_1',
      content: 'SMALL [svc: 9 items omitted]',
      cache_control: { type: 'ephemeral' },
    });
    expect(blocks[1]).toEqual((original[2]!.content as unknown[])[1]);
    expect(blocks[2]).toEqual(image);
    expect(back[1]).toEqual(original[1]);
    expect(back[0]).toEqual(original[0]);
  });

  it('splices changed text as a string into the text blocks, leaving thinking and tool_use untouched', () => {
    const { text, parsed } = parse(conversation());
    const out = parsed.messages.map((m, i) => (i === 1 ? { ...m, content: 'Listing orders (short).' } : m));
    const back = messagesOf(
      spliceRequest(
        messagesFormat,
        text,
        parsed,
        output(
          out,
          out.map((_, i) => i),
        ),
      ),
    );
    expect(back[1]!.content).toEqual([
      thinking,
      { type: 'text', text: 'Listing orders (short).' },
      { type: 'tool_use', id: 'toolu_1', name: 'http_get', input: { url: '/v1/orders' } },
    ]);
  });

  it('drops the blocks of dropped messages and joins an inserted marker to the user turn before it', () => {
    const original = conversation();
    const { text, parsed } = parse(original);
    const conv = { chat: parsed.messages };
    // Engine dropped the tool call and its result (chat 1 and 2) and inserted a marker.
    const marker: ChatMessage = {
      role: 'user',
      content: '[svc: 2 messages omitted; retrieve with svc_retrieve hash=0123456789abcdef01234567]',
    };
    const messages = [conv.chat[0]!, marker, conv.chat[3]!, conv.chat[4]!, conv.chat[5]!];
    const back = messagesOf(spliceRequest(messagesFormat, text, parsed, output(messages, [0, -1, 3, 4, 5])));
    // the roles of the messages format alternate: the marker joins the user message before it
    expect(back).toEqual([
      { role: 'user', content: `${original[0]!.content}\n\n${marker.content}` },
      { role: 'user', content: [{ type: 'text', text: 'Also look at this screenshot.' }, image] },
      original[3],
      original[4],
    ]);
  });

  it('rejects an engine output whose origins do not match its messages', () => {
    const { text, parsed } = parse(conversation());
    expect(() => spliceRequest(messagesFormat, text, parsed, output(parsed.messages, [0]))).toThrow(
      /messageOrigin/,
    );
  });
});
