#!/usr/bin/env node
/**
 * Rebuilds OpenAI Responses request bodies (what Codex sends to
 * `/v1/responses`) from the eval's Codex cases, which are stored in the chat
 * format (../shared/eval/README.md): the first system message becomes
 * `instructions`; later system messages are `developer` message items; user
 * and assistant messages are message items (`input_text` / `output_text`);
 * a tool call is a `function_call` item, or a `custom_tool_call` item when its
 * arguments are only `{"input": "..."}` (Codex's `apply_patch`); a tool
 * message is the matching `function_call_output` / `custom_tool_call_output`
 * (shell outputs keep Codex's `Chunk ID: ... Output:` header).
 *
 * A Codex request is sent before each assistant turn: `turns` holds the
 * number of items each request carries.
 *
 *   node scripts/codex-responses.js --fixture OUT.json [--case FILE] [--items 60]
 *     writes a small fixture (the first --items items of one case, every text
 *     and tool output cut to at most 4000 characters) for test/formats/responses.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/** The Responses conversation of a chat-format Codex case. */
export function codexToResponses(messages) {
  let instructions;
  const items = [];
  const turns = [];
  const customCalls = new Set();
  messages.forEach((msg, i) => {
    if (msg.role === 'system' && i === 0 && typeof msg.content === 'string') {
      instructions = msg.content;
      return;
    }
    const text =
      typeof msg.content === 'string' ? msg.content : (msg.content ?? []).map((p) => p.text ?? '').join('');
    if (msg.role === 'system' || msg.role === 'user') {
      const role = msg.role === 'system' ? 'developer' : 'user';
      items.push({ type: 'message', role, content: [{ type: 'input_text', text }] });
    } else if (msg.role === 'assistant') {
      if (items.length > 0) turns.push(items.length);
      if (text)
        items.push({
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text, annotations: [] }],
        });
      for (const call of msg.tool_calls ?? []) {
        const args = call.function.arguments;
        let input;
        try {
          const parsed = JSON.parse(args);
          if (
            parsed &&
            typeof parsed === 'object' &&
            Object.keys(parsed).length === 1 &&
            typeof parsed.input === 'string'
          )
            input = parsed.input;
        } catch {
          // not JSON: a function call with raw arguments
        }
        if (input !== undefined) {
          customCalls.add(call.id);
          items.push({ type: 'custom_tool_call', call_id: call.id, name: call.function.name, input });
        } else
          items.push({ type: 'function_call', call_id: call.id, name: call.function.name, arguments: args });
      }
    } else if (msg.role === 'tool') {
      const type = customCalls.has(msg.tool_call_id) ? 'custom_tool_call_output' : 'function_call_output';
      items.push({ type, call_id: msg.tool_call_id, output: text });
    }
  });
  turns.push(items.length);
  return { instructions, items, turns };
}

/** Codex's tools, as it declares them (shapes only). */
export const CODEX_TOOLS = [
  {
    type: 'function',
    name: 'exec_command',
    description: 'Runs a command in a PTY, returning output or a session ID for ongoing interaction.',
    strict: false,
    parameters: {
      type: 'object',
      properties: { cmd: { type: 'string' }, workdir: { type: 'string' }, yield_time_ms: { type: 'number' } },
      required: ['cmd'],
      additionalProperties: false,
    },
  },
  {
    type: 'function',
    name: 'update_plan',
    description: 'Updates the task plan.',
    strict: false,
    parameters: {
      type: 'object',
      properties: { plan: { type: 'array', items: { type: 'object' } } },
      required: ['plan'],
    },
  },
  {
    type: 'custom',
    name: 'apply_patch',
    description: 'Use the `apply_patch` tool to edit files.',
    format: { type: 'text' },
  },
];

/** The body Codex sends for the request carrying the first `count` items (field order as Codex writes it). */
export function codexBody(conversation, count, model = 'gpt-5-codex') {
  return {
    model,
    instructions: conversation.instructions,
    tools: CODEX_TOOLS,
    tool_choice: 'auto',
    parallel_tool_calls: false,
    reasoning: { effort: 'medium', summary: 'auto' },
    store: false,
    stream: true,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: 'codex-replay',
    input: conversation.items.slice(0, count),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      fixture: { type: 'string' },
      case: {
        type: 'string',
        default: '../shared/eval/dev/codex_agentv__019ed917-1cf7-72a3-92f5-c0aa98fb134e_t82.json',
      },
      items: { type: 'string', default: '60' },
    },
  });
  if (!values.fixture) {
    console.error('usage: node scripts/codex-responses.js --fixture OUT.json [--case FILE] [--items 60]');
    process.exit(2);
  }
  const source = JSON.parse(readFileSync(values.case, 'utf8'));
  const full = codexToResponses(source.messages);
  const n = Number(values.items);
  const cut = (s) => (s.length > 4000 ? s.slice(0, 4000) : s);
  const items = full.items.slice(0, n).map((item) => {
    if (typeof item.output === 'string') return { ...item, output: cut(item.output) };
    if (item.type === 'message')
      return { ...item, content: item.content.map((p) => ({ ...p, text: cut(p.text) })) };
    return item;
  });
  const fixture = {
    source: `${source.id} (${source.repo}, ${source.license}); built by scripts/codex-responses.js`,
    instructions: cut(full.instructions),
    items,
    turns: full.turns.filter((t) => t <= n),
  };
  writeFileSync(values.fixture, `${JSON.stringify(fixture, null, 1)}\n`);
  console.error(`${values.fixture}: ${items.length} items, ${fixture.turns.length} requests`);
}
