import { describe, expect, it } from 'vitest';
import { detectInput } from '../../src/cli/detect-input.js';

const chatBody = {
  model: 'gpt-4.1',
  messages: [
    { role: 'system', content: 's' },
    { role: 'user', content: 'q' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'out' },
  ],
};
const messagesBody = {
  model: 'claude-sonnet-4-5',
  system: 's',
  messages: [
    { role: 'user', content: 'q' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'out' }] },
  ],
};

describe('input detection', () => {
  it.each([
    [
      'a chat-completions body',
      chatBody,
      'chat',
      'gpt-4.1',
      true,
      /^chat format: messages\[0\]\.role "system"/,
    ],
    ['a bare chat array', chatBody.messages, 'chat', undefined, false, /^chat format: \[0\]\.role "system"/],
    [
      'a messages-format body',
      messagesBody,
      'messages',
      'claude-sonnet-4-5',
      true,
      /^messages format: the top-level "system" field/,
    ],
    [
      'a bare messages-format array',
      messagesBody.messages,
      'messages',
      undefined,
      false,
      /^messages format: \[1\]\.content\[0\] \(tool_use\)/,
    ],
    [
      'plain text turns',
      [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'yo' },
      ],
      'chat',
      undefined,
      false,
      /^plain text messages$/,
    ],
    [
      'an image with a source',
      [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'u' } }] }],
      'messages',
      undefined,
      false,
      /image source/,
    ],
  ])('%s', (_name, input, format, model, hasBody, reason) => {
    const found = detectInput(input, 'x.json');
    expect(found.format).toBe(format);
    expect(found.model).toBe(model);
    expect(found.body !== undefined).toBe(hasBody);
    expect(found.reason).toMatch(reason);
  });

  it('lets --input-format override the detection', () => {
    const found = detectInput(messagesBody, 'x.json', 'chat');
    expect(found.format).toBe('chat');
    expect(found.reason).toBe('--input-format chat');
  });
});
