import { describe, expect, it } from 'vitest';
import { aiSdkView } from '../../packages/client/src/convert-ai-sdk.js';
import { anthropicView } from '../../packages/client/src/convert-anthropic.js';
import { spliceResult, viewMessages } from '../../packages/client/src/splice.js';
import type { ChatMessage } from '../../packages/client/src/types.js';
import { aiSdkPrompt, anthropicRequest, LONG_LOG, LONG_TOOL_OUTPUT } from './fixtures.js';
import { squeeze, squeezeToolMessages } from './helpers.js';

const MARKER =
  '[svc: 3 messages omitted (tools: list_files, read_log); retrieve with svc_retrieve hash=0123456789abcdef01234567]';

describe('Anthropic <-> chat view', () => {
  it('sends only text-bearing blocks, tool_use as tool_calls, tool_results as tool messages', () => {
    const view = anthropicView(anthropicRequest());
    expect(viewMessages(view)).toEqual([
      {
        role: 'system',
        content: [
          { type: 'text', text: 'You are a careful coding agent.' },
          { type: 'text', text: 'Answer briefly.' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'What is in this screenshot? Then list the files.' }] },
      {
        role: 'assistant',
        content: [{ type: 'text', text: 'A login form. Listing files now.' }],
        tool_calls: [
          { id: 'toolu_01', type: 'function', function: { name: 'list_files', arguments: '{"path":"."}' } },
          {
            id: 'toolu_02',
            type: 'function',
            function: { name: 'read_log', arguments: '{"file":"build.log"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_01', content: LONG_TOOL_OUTPUT },
      { role: 'tool', tool_call_id: 'toolu_02', content: [{ type: 'text', text: LONG_LOG }] },
      { role: 'user', content: [{ type: 'text', text: 'Summarise both.' }] },
      { role: 'assistant', content: [{ type: 'text', text: '30 files; the build passed.' }] },
      { role: 'user', content: [{ type: 'text', text: 'And the README?' }] },
    ]);
  });

  it('round-trips unchanged: the very same request object when nothing was compressed', () => {
    const request = anthropicRequest();
    const snapshot = structuredClone(request);
    const view = anthropicView(request);
    const out = structuredClone(viewMessages(view));
    expect(spliceResult(request, view, out)).toBe(request);
    expect(request).toEqual(snapshot);
  });

  it('splices compressed tool results in place; images, thinking, signatures, cache_control and order survive', () => {
    const request = anthropicRequest();
    const snapshot = structuredClone(request);
    const view = anthropicView(request);
    const out = squeezeToolMessages(structuredClone(viewMessages(view))) as ChatMessage[];
    const result = spliceResult(request, view, out)!;

    const expected = structuredClone(snapshot);
    const toolTurn = expected.messages[2]!.content as Array<Record<string, unknown>>;
    toolTurn[0]!.content = squeeze(LONG_TOOL_OUTPUT);
    (toolTurn[1]!.content as Array<Record<string, unknown>>)[0]!.text = squeeze(LONG_LOG);
    expect(result).toEqual(expected);
    // The request passed in is not modified, and untouched nodes are the same objects.
    expect(request).toEqual(snapshot);
    expect(result).not.toBe(request);
    expect(result.system).toBe(request.system);
    for (const i of [0, 1, 3, 4]) expect(result.messages[i]).toBe(request.messages[i]);
    const before = request.messages[2]!.content as Array<Record<string, unknown>>;
    const after = result.messages[2]!.content as Array<Record<string, unknown>>;
    expect(after[2]).toBe(before[2]);
    expect((after[1]!.content as unknown[])[1]).toBe((before[1]!.content as unknown[])[1]);
    // Key order of a spliced block is kept (cache_control stays after content).
    expect(Object.keys(after[0]!)).toEqual(Object.keys(before[0]!));
  });

  it('writes a compressed string content and system prompt back as strings', () => {
    const request = {
      model: 'm',
      system: 'sys prompt',
      messages: [
        { role: 'user', content: 'long question' },
        { role: 'assistant', content: 'ok' },
      ],
    };
    const view = anthropicView(request);
    const out = viewMessages(view).map((m) => ({ ...m, content: `~${m.content as string}` }));
    expect(spliceResult(request, view, out)).toEqual({
      model: 'm',
      system: '~sys prompt',
      messages: [
        { role: 'user', content: '~long question' },
        { role: 'assistant', content: '~ok' },
      ],
    });
  });

  it('applies dropped messages: the blocks they stood for go, the marker takes their place', () => {
    const request = anthropicRequest();
    const view = anthropicView(request);
    const chat = viewMessages(view);
    // The service dropped the assistant turn and both tool results (view 2..4).
    const out = [chat[0]!, chat[1]!, { role: 'user', content: MARKER }, ...chat.slice(5)];
    const result = spliceResult(request, view, out)!;
    expect(result.messages).toEqual([
      request.messages[0],
      { role: 'user', content: [{ type: 'text', text: MARKER }] },
      { role: 'user', content: [{ type: 'text', text: 'Summarise both.' }] },
      request.messages[3],
      request.messages[4],
    ]);
    expect(result.messages[3]).toBe(request.messages[3]);
  });

  it('reads a marker-only message of the same role as a drop, not as a compressed message', () => {
    const request = anthropicRequest();
    const view = anthropicView(request);
    const chat = viewMessages(view);
    const marker = MARKER.replace('3 messages', '4 messages');
    const result = spliceResult(request, view, [
      chat[0]!,
      { role: 'user', content: marker },
      ...chat.slice(5),
    ])!;
    expect(result.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: marker }] },
      { role: 'user', content: [{ type: 'text', text: 'Summarise both.' }] },
      request.messages[3],
      request.messages[4],
    ]);
  });

  it('returns null (send the original) when the result does not line up', () => {
    const request = anthropicRequest();
    const view = anthropicView(request);
    const chat = viewMessages(view);
    expect(spliceResult(request, view, chat.slice(1))).toBeNull();
    expect(spliceResult(request, view, [...chat, { role: 'user', content: 'extra' }])).toBeNull();
    const reordered = [chat[0]!, chat[2]!, chat[1]!, ...chat.slice(3)];
    expect(spliceResult(request, view, reordered)).toBeNull();
    // A marker that claims more messages than exist does not align either.
    expect(
      spliceResult(request, view, [chat[0]!, { role: 'user', content: MARKER.replace('3', '30') }]),
    ).toBeNull();
  });

  it('keeps a message that merely quotes a marker (backtracking)', () => {
    const request = {
      model: 'm',
      messages: [
        { role: 'user', content: `why did you write ${MARKER.replace('3 messages', '1 messages')}?` },
        { role: 'assistant', content: 'that is a marker' },
      ],
    };
    const view = anthropicView(request);
    expect(spliceResult(request, view, viewMessages(view))).toBe(request);
  });
});

describe('AI SDK prompt <-> chat view', () => {
  it('sends text, tool calls and tool outputs; json outputs as JSON text', () => {
    const view = aiSdkView(aiSdkPrompt());
    expect(viewMessages(view)).toEqual([
      { role: 'system', content: 'You are a careful coding agent.' },
      { role: 'user', content: [{ type: 'text', text: 'List the files.' }] },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'list_files', arguments: '{"path":"."}' } },
          {
            id: 'call_2',
            type: 'function',
            function: { name: 'read_log', arguments: '{"file":"build.log"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: LONG_TOOL_OUTPUT },
      { role: 'tool', tool_call_id: 'call_2', content: LONG_LOG },
      { role: 'user', content: [{ type: 'text', text: 'Summarise both.' }] },
    ]);
  });

  it('splices back: a compressed json output becomes text, files and reasoning untouched', () => {
    const prompt = aiSdkPrompt();
    const snapshot = structuredClone(prompt);
    const view = aiSdkView(prompt);
    const root = { prompt };
    expect(spliceResult(root, view, structuredClone(viewMessages(view)))).toBe(root);
    const out = squeezeToolMessages(structuredClone(viewMessages(view))) as ChatMessage[];
    const result = spliceResult(root, view, out)!;
    const expected = structuredClone(snapshot);
    expected[3]!.content = [
      {
        type: 'tool-result',
        toolCallId: 'call_1',
        toolName: 'list_files',
        output: { type: 'text', value: squeeze(LONG_TOOL_OUTPUT) },
      },
      {
        type: 'tool-result',
        toolCallId: 'call_2',
        toolName: 'read_log',
        output: { type: 'text', value: squeeze(LONG_LOG) },
      },
    ] as never;
    expect(result.prompt).toEqual(expected);
    expect(prompt).toEqual(snapshot);
    for (const i of [0, 1, 2, 4]) expect(result.prompt[i]).toBe(prompt[i]);
  });
});
