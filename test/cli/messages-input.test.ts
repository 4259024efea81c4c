import { describe, expect, it } from 'vitest';
import {
  chatToMessagesFormat,
  type MessagesFormatMessage,
  messagesFormatToChat,
} from '../../src/cli/messages-input.js';
import type { ChatMessage } from '../../src/engine/types.js';

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
const identity = (chat: ChatMessage[]) => ({
  messages: chat,
  messageOrigin: chat.map((_, i) => i),
  changed: new Set<number>(),
});

describe('messages-format adapter', () => {
  it('converts blocks to chat: system first, tool_use to tool_calls, tool_result to tool messages', () => {
    const { chat } = messagesFormatToChat(conversation(), 'You are an agent.');
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

  it('returns the very same message objects when nothing changed', () => {
    const original = conversation();
    const conv = messagesFormatToChat(original, 'sys');
    const back = chatToMessagesFormat(conv, identity(conv.chat));
    expect(back).toHaveLength(original.length);
    for (const [i, msg] of back.entries()) expect(msg).toBe(original[i]);
  });

  it('splices a changed tool result into its block and keeps every other block as it was', () => {
    const original = conversation();
    const conv = messagesFormatToChat(original);
    const out = conv.chat.map((m) =>
      m.role === 'tool' ? { ...m, content: 'SMALL [svc: 9 items omitted]' } : m,
    );
    const back = chatToMessagesFormat(conv, {
      messages: out,
      messageOrigin: out.map((_, i) => i),
      changed: new Set([2]),
    });
    const blocks = back[2]!.content as Array<Record<string, unknown>>;
    expect(blocks[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_1',
      content: 'SMALL [svc: 9 items omitted]',
      cache_control: { type: 'ephemeral' },
    });
    expect(blocks[1]).toBe((original[2]!.content as unknown[])[1]);
    expect(blocks[2]).toBe(image);
    expect(back[1]).toBe(original[1]);
    expect(back[0]).toBe(original[0]);
  });

  it('splices changed text as a string into the text blocks, leaving thinking and tool_use untouched', () => {
    const original = conversation();
    const conv = messagesFormatToChat(original);
    const out = conv.chat.map((m, i) => (i === 1 ? { ...m, content: 'Listing orders (short).' } : m));
    const back = chatToMessagesFormat(conv, {
      messages: out,
      messageOrigin: out.map((_, i) => i),
      changed: new Set([1]),
    });
    expect(back[1]!.content).toEqual([
      thinking,
      { type: 'text', text: 'Listing orders (short).' },
      { type: 'tool_use', id: 'toolu_1', name: 'http_get', input: { url: '/v1/orders' } },
    ]);
  });

  it('drops the blocks of dropped messages and places inserted markers where the engine put them', () => {
    const original = conversation();
    const conv = messagesFormatToChat(original);
    // Engine dropped the tool call and its result (chat 1 and 2) and inserted a marker.
    const marker: ChatMessage = {
      role: 'user',
      content: '[svc: 2 messages omitted; retrieve with svc_retrieve hash=0123456789abcdef01234567]',
    };
    const messages = [conv.chat[0]!, marker, conv.chat[3]!, conv.chat[4]!, conv.chat[5]!];
    const back = chatToMessagesFormat(conv, {
      messages,
      messageOrigin: [0, -1, 3, 4, 5],
      changed: new Set(),
    });
    expect(back).toEqual([
      original[0],
      { role: 'user', content: marker.content },
      { role: 'user', content: [{ type: 'text', text: 'Also look at this screenshot.' }, image] },
      original[3],
      original[4],
    ]);
  });

  it('rejects an engine output whose origins do not match its messages', () => {
    const conv = messagesFormatToChat(conversation());
    expect(() =>
      chatToMessagesFormat(conv, { messages: conv.chat, messageOrigin: [0], changed: new Set() }),
    ).toThrow(/messageOrigin/);
  });
});
