import { describe, expect, it } from 'vitest';
import { compressMessages } from '../../src/engine/index.js';
import { parseMarkers } from '../../src/engine/markers.js';
import { tokenizerFor } from '../../src/engine/tokens.js';
import { chatFormat, messagesFormat, parseRequest, spliceRequest } from '../../src/formats/index.js';
import { type AnthropicMessage, assertValidAnthropic, assertValidChat } from './anthropic-view.js';
import { filler } from './helpers.js';

/** An agent session in the messages format: tool_use / tool_result pairs, reminders, plain turns. */
function anthropicBody(rounds: number): {
  model: string;
  max_tokens: number;
  system: string;
  messages: unknown[];
} {
  const messages: unknown[] = [{ role: 'user', content: 'Fix the failing build in src/app.ts' }];
  for (let n = 0; n < rounds; n += 1) {
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `Checking step ${n}.` },
        {
          type: 'tool_use',
          id: `toolu_${n}`,
          name: n % 2 ? 'Read' : 'Bash',
          input: { path: `src/f${n}.ts` },
        },
      ],
    });
    const user: unknown[] = [{ type: 'tool_result', tool_use_id: `toolu_${n}`, content: filler(n, 250) }];
    if (n % 3 === 0) user.push({ type: 'text', text: '<system-reminder>keep going</system-reminder>' });
    messages.push({ role: 'user', content: user });
    if (n % 7 === 6) {
      messages.push({ role: 'assistant', content: `Done with part ${n}.` });
      messages.push({ role: 'user', content: `Next, module ${n}` });
    }
  }
  return { model: 'claude-sonnet-4-5', max_tokens: 2000, system: 'You are an agent.', messages };
}

const asBlocks = (messages: Array<{ role: 'user' | 'assistant'; content: unknown }>): AnthropicMessage[] =>
  messages.map((m) => ({
    role: m.role,
    content:
      typeof m.content === 'string'
        ? [{ type: 'text', text: m.content }]
        : (m.content as AnthropicMessage['content']),
  }));

describe('an over-limit conversation cut to fit, spliced back into both formats', () => {
  it('messages format: roles alternate, tool_use/tool_result pairs intact, markers merged into user turns', () => {
    const body = anthropicBody(60);
    const text = JSON.stringify(body);
    const parsed = parseRequest(messagesFormat, body);
    const tokens = tokenizerFor(body.model).countMessages(parsed.messages);
    for (const intelligentContext of [true, false]) {
      const output = compressMessages(parsed.messages, {
        model: body.model,
        contextLimit: Math.floor(tokens * 0.5),
        outputReserve: parsed.maxTokens,
        intelligentContext,
        compressFirst: false,
      });
      expect(output.messageOrigin).toContain(-1);
      const spliced = JSON.parse(spliceRequest(messagesFormat, text, parsed, output)!);
      expect(spliced.messages.length).toBeLessThan(body.messages.length);
      assertValidAnthropic(asBlocks(spliced.messages));
      expect(spliced.system).toBe(body.system);
      expect(spliced.messages.at(-1)).toEqual(body.messages.at(-1));
      const markerTexts =
        JSON.stringify(spliced.messages).match(/\[svc: \d+ messages omitted[^\]]*\]/g) ?? [];
      expect(markerTexts.length).toBe(output.messageOrigin.filter((o) => o === -1).length);
      for (const m of markerTexts) expect(output.ccrEntries.has(parseMarkers(m)[0]!.hash)).toBe(true);
    }
  });

  it('chat format: tool calls answered right after, no orphan results', () => {
    const body = anthropicBody(60);
    const parsedA = parseRequest(messagesFormat, body);
    const chatBody = { model: 'gpt-4o', max_tokens: 2000, messages: parsedA.messages };
    const text = JSON.stringify(chatBody);
    const parsed = parseRequest(chatFormat, chatBody);
    const tokens = tokenizerFor('gpt-4o').countMessages(parsed.messages);
    const output = compressMessages(parsed.messages, {
      model: 'gpt-4o',
      contextLimit: Math.floor(tokens * 0.5),
      outputReserve: parsed.maxTokens,
      compressFirst: false,
    });
    const spliced = JSON.parse(spliceRequest(chatFormat, text, parsed, output)!);
    expect(spliced.messages.length).toBeLessThan(chatBody.messages.length);
    assertValidChat(spliced.messages);
    expect(
      spliced.messages.filter((m: { content: unknown }) => /messages omitted/.test(String(m.content))).length,
    ).toBeGreaterThan(0);
  });
});
