/**
 * Small conversations with everything the chat format cannot carry: images,
 * documents, thinking blocks with signatures, redacted thinking, cache_control,
 * server tool blocks, and tool_use/tool_result pairs.
 */

export const LONG_TOOL_OUTPUT = JSON.stringify(
  Array.from({ length: 30 }, (_, i) => ({ id: i, name: `file-${i}.ts`, size: 1000 + i, status: 'ok' })),
);
export const LONG_LOG = Array.from(
  { length: 40 },
  (_, i) => `2024-01-01T00:00:${String(i).padStart(2, '0')} INFO step ${i} done`,
).join('\n');

/** A messages-format request body (Anthropic). */
export function anthropicRequest() {
  return {
    model: 'claude-test-1',
    max_tokens: 1024,
    system: [
      { type: 'text', text: 'You are a careful coding agent.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Answer briefly.' },
    ],
    messages: [
      {
        role: 'user',
        content: [
          {
            type: 'image',
            source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgoAAAANSUhEUg==' },
          },
          {
            type: 'text',
            text: 'What is in this screenshot? Then list the files.',
            cache_control: { type: 'ephemeral' },
          },
        ],
      },
      {
        role: 'assistant',
        content: [
          {
            type: 'thinking',
            thinking: 'The user wants the files listed.',
            signature: 'EqQBCkYIBxgCKkDsig==',
          },
          { type: 'text', text: 'A login form. Listing files now.' },
          { type: 'tool_use', id: 'toolu_01', name: 'list_files', input: { path: '.' } },
          { type: 'tool_use', id: 'toolu_02', name: 'read_log', input: { file: 'build.log' } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01',
            content: LONG_TOOL_OUTPUT,
            cache_control: { type: 'ephemeral' },
          },
          {
            type: 'tool_result',
            tool_use_id: 'toolu_02',
            content: [
              { type: 'text', text: LONG_LOG },
              { type: 'image', source: { type: 'url', url: 'https://example.invalid/chart.png' } },
            ],
            is_error: false,
          },
          { type: 'text', text: 'Summarise both.' },
        ],
      },
      {
        role: 'assistant',
        content: [
          {
            type: 'redacted_thinking',
            data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP',
          },
          { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'vite config' } },
          { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01', content: [] },
          { type: 'text', text: '30 files; the build passed.', citations: null },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'document',
            source: { type: 'text', media_type: 'text/plain', data: 'README contents' },
            title: 'README',
            citations: { enabled: true },
          },
          { type: 'text', text: 'And the README?' },
        ],
      },
    ],
  };
}

/** An AI SDK prompt (LanguageModelV2Prompt) with the same kinds of content. */
export function aiSdkPrompt() {
  return [
    { role: 'system', content: 'You are a careful coding agent.' },
    {
      role: 'user',
      content: [
        { type: 'file', mediaType: 'image/png', data: 'iVBORw0KGgoAAAANSUhEUg==' },
        {
          type: 'text',
          text: 'List the files.',
          providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
        },
      ],
    },
    {
      role: 'assistant',
      content: [
        {
          type: 'reasoning',
          text: 'The user wants files.',
          providerOptions: { anthropic: { signature: 'sig==' } },
        },
        { type: 'tool-call', toolCallId: 'call_1', toolName: 'list_files', input: { path: '.' } },
        { type: 'tool-call', toolCallId: 'call_2', toolName: 'read_log', input: { file: 'build.log' } },
      ],
    },
    {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call_1',
          toolName: 'list_files',
          output: { type: 'json', value: JSON.parse(LONG_TOOL_OUTPUT) },
        },
        {
          type: 'tool-result',
          toolCallId: 'call_2',
          toolName: 'read_log',
          output: { type: 'text', value: LONG_LOG },
        },
      ],
    },
    { role: 'user', content: [{ type: 'text', text: 'Summarise both.' }] },
  ];
}
