/** Request bodies used by the format and server tests (text, so byte checks are exact). */

export function longText(label: string, lines = 40): string {
  return Array.from(
    { length: lines },
    (_, i) => `${label} line ${i}: the quick brown fox jumps over the lazy dog`,
  ).join('\n');
}

/** A messages-format agent turn with every kind of block the proxy must leave alone. */
export function messagesBody(options: { stream?: boolean } = {}): Record<string, unknown> {
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    ...(options.stream ? { stream: true } : {}),
    system: [{ type: 'text', text: 'You are a coding agent.', cache_control: { type: 'ephemeral' } }],
    tools: [
      {
        name: 'bash',
        description: 'run',
        input_schema: { type: 'object', properties: { cmd: { type: 'string' } } },
      },
    ],
    messages: [
      { role: 'user', content: 'Find the failing test.' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should run the tests.', signature: 'EqQBCkYIARABGAIiQL+sig/==' },
          { type: 'text', text: 'Running the tests.' },
          { type: 'tool_use', id: 'toolu_01', name: 'bash', input: { cmd: 'npm test' } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01',
            content: longText('test output'),
            cache_control: { type: 'ephemeral' },
          },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'redacted_thinking', data: 'ENCRYPTED==' },
          { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'vitest flaky' } },
          {
            type: 'web_search_tool_result',
            tool_use_id: 'srvtoolu_1',
            content: [
              { type: 'web_search_result', url: 'https://example.com', title: 't', encrypted_content: 'xyz' },
            ],
          },
          { type: 'tool_use', id: 'toolu_02', name: 'bash', input: { cmd: 'cat log' } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_02',
            content: [
              { type: 'text', text: longText('log') },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            ],
          },
          { type: 'text', text: 'small note' },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc' } },
        ],
      },
      { role: 'assistant', content: 'I see the failure.' },
      {
        role: 'user',
        content: [{ type: 'text', text: 'Fix it please.', cache_control: { type: 'ephemeral' } }],
      },
    ],
  };
}

/** A chat-format agent turn: tool_calls, tool messages, content parts. */
export function chatBody(options: { stream?: boolean } = {}): Record<string, unknown> {
  return {
    model: 'gpt-4o',
    ...(options.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    temperature: 0.2,
    messages: [
      { role: 'system', content: 'You are a coding agent.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in the log?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'read', arguments: '{"path":"app.log","n":12345678901234567890}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: longText('app log') },
      { role: 'assistant', content: 'The log shows a timeout.' },
      { role: 'user', content: 'Why?' },
    ],
  };
}
