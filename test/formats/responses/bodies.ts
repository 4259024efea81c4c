import { longText } from '../bodies.js';

/**
 * A Responses-format agent turn shaped as Codex sends it, with every item
 * kind the proxy must leave alone (reasoning with encrypted content, a
 * compaction item, server-state fields) and two large tool outputs.
 */
export function responsesBody(
  options: { stream?: boolean; compaction?: boolean } = {},
): Record<string, unknown> {
  return {
    model: 'gpt-5-codex',
    instructions: 'You are Codex, a coding agent.',
    ...(options.stream ? { stream: true } : {}),
    store: false,
    prompt_cache_key: 'session-7f3a',
    prompt_cache_retention: '24h',
    context_management: [{ type: 'compaction', compact_threshold: 200000 }],
    reasoning: { effort: 'medium', summary: 'auto' },
    include: ['reasoning.encrypted_content'],
    max_output_tokens: 4096,
    tools: [
      {
        type: 'function',
        name: 'exec_command',
        description: 'run a shell command',
        strict: false,
        parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
      },
      { type: 'custom', name: 'apply_patch', description: 'edit files' },
    ],
    input: [
      ...(options.compaction
        ? [
            {
              type: 'message',
              role: 'user',
              content: [{ type: 'input_text', text: longText('before compaction') }],
            },
            { type: 'compaction', id: 'cmp_1', encrypted_content: 'gAAAAB-compacted==' },
          ]
        : []),
      {
        type: 'message',
        role: 'developer',
        content: [
          { type: 'input_text', text: '<permissions instructions>sandbox</permissions instructions>' },
        ],
      },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Find the failing test.' }] },
      {
        type: 'reasoning',
        id: 'rs_1',
        summary: [{ type: 'summary_text', text: 'I should run the tests.' }],
        encrypted_content: 'gAAAAB-reasoning==',
      },
      {
        type: 'function_call',
        id: 'fc_1',
        call_id: 'call_1',
        name: 'exec_command',
        arguments: '{"cmd":"npm test"}',
      },
      {
        type: 'function_call_output',
        call_id: 'call_1',
        output: `Chunk ID: 19dc0a\nWall time: 1.2 seconds\nProcess exited with code 1\nOriginal token count: 900\nOutput:\n${longText('test output')}`,
      },
      {
        type: 'custom_tool_call',
        id: 'ctc_1',
        call_id: 'call_2',
        name: 'apply_patch',
        input: '*** Begin Patch\n*** End Patch',
      },
      { type: 'custom_tool_call_output', call_id: 'call_2', output: longText('patch output') },
      {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'I see the failure.', annotations: [] }],
      },
      { role: 'user', content: 'Fix it please.' },
    ],
  };
}

/** A complete (non-streaming) Responses answer. */
export function responseObject(output: unknown[], usage = { input: 1000, cached: 600, output: 50 }) {
  return {
    id: 'resp_1',
    object: 'response',
    created_at: 1760000000,
    status: 'completed',
    model: 'gpt-5-codex',
    output,
    usage: {
      input_tokens: usage.input,
      input_tokens_details: { cached_tokens: usage.cached },
      output_tokens: usage.output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.input + usage.output,
    },
  };
}

/** An assistant message output item. */
export const textItem = (text: string, id = 'msg_1') => ({
  type: 'message',
  id,
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [] }],
});

/** A function_call output item. */
export const callItem = (name: string, args: string, callId = 'call_9', id = 'fc_9') => ({
  type: 'function_call',
  id,
  call_id: callId,
  name,
  arguments: args,
  status: 'completed',
});

/**
 * The SSE events of one streamed response with these output items, as the
 * API sends them (`event:` name, data with `type` and `sequence_number`).
 */
export function responseEvents(
  output: Array<Record<string, unknown>>,
  usage = { input: 1000, cached: 600, output: 50 },
  id = 'resp_1',
): Array<[string, string]> {
  const events: Array<[string, Record<string, unknown>]> = [];
  const base = { id, object: 'response', created_at: 1760000000, model: 'gpt-5-codex', output: [] };
  events.push(['response.created', { response: { ...base, status: 'in_progress' } }]);
  events.push(['response.in_progress', { response: { ...base, status: 'in_progress' } }]);
  output.forEach((item, i) => {
    if (item.type === 'message') {
      const text = (item.content as Array<{ text: string }>)[0]!.text;
      events.push([
        'response.output_item.added',
        { output_index: i, item: { ...item, status: 'in_progress', content: [] } },
      ]);
      const part = { type: 'output_text', text: '', annotations: [] };
      events.push([
        'response.content_part.added',
        { item_id: item.id, output_index: i, content_index: 0, part },
      ]);
      for (const piece of text.match(/.{1,8}/gs) ?? [])
        events.push([
          'response.output_text.delta',
          { item_id: item.id, output_index: i, content_index: 0, delta: piece, logprobs: [] },
        ]);
      events.push([
        'response.output_text.done',
        { item_id: item.id, output_index: i, content_index: 0, text, logprobs: [] },
      ]);
      events.push([
        'response.content_part.done',
        { item_id: item.id, output_index: i, content_index: 0, part: { ...part, text } },
      ]);
    } else if (item.type === 'function_call') {
      events.push([
        'response.output_item.added',
        { output_index: i, item: { ...item, arguments: '', status: 'in_progress' } },
      ]);
      events.push([
        'response.function_call_arguments.delta',
        { item_id: item.id, output_index: i, delta: item.arguments },
      ]);
      events.push([
        'response.function_call_arguments.done',
        { item_id: item.id, output_index: i, arguments: item.arguments },
      ]);
    } else events.push(['response.output_item.added', { output_index: i, item }]);
    events.push(['response.output_item.done', { output_index: i, item }]);
  });
  const done = responseObject(output, usage);
  events.push(['response.completed', { response: { ...done, id } }]);
  return events.map(([type, data], n) => [type, JSON.stringify({ type, sequence_number: n, ...data })]);
}

/** The SSE text of `responseEvents`. */
export const sseOf = (events: Array<[string, string]>): string =>
  events.map(([e, d]) => `event: ${e}\ndata: ${d}\n\n`).join('');
