import { describe, expect, it } from 'vitest';
import { fitToContext } from '../../src/engine/context/manager.js';
import type { FitOptions } from '../../src/engine/context/types.js';
import { compressMessages } from '../../src/engine/index.js';
import { parseMarkers } from '../../src/engine/markers.js';
import { contentText, tokenizerFor } from '../../src/engine/tokens.js';
import type { ChatMessage, ContentMemo } from '../../src/engine/types.js';
import { assertValidAnthropic, assertValidChat, toAnthropic } from './anthropic-view.js';
import { assistant, filler, round, sys, toolPairsIntact, user } from './helpers.js';

const tokenizer = tokenizerFor('gpt-4o');

function mapMemo(): ContentMemo {
  const map = new Map<string, string>();
  return { get: (k) => map.get(k), set: (k, v) => void map.set(k, v) };
}

/** One user request, then a long run of agent work after it (the shape of a Claude Code task). */
function longTask(rounds: number): ChatMessage[] {
  const msgs: ChatMessage[] = [
    sys('You are a coding agent.'),
    user('Earlier question about the parser.'),
    assistant('The parser is fine.'),
    user('Rename parseConfig to loadConfig everywhere.'),
  ];
  for (let n = 0; n < rounds; n += 1)
    msgs.push(...round(n, n % 2 ? 'read_file' : 'bash', `src/file${n}.ts`, 300));
  return msgs;
}

const lastUserOf = (msgs: readonly ChatMessage[]) => msgs.map((m) => m.role).lastIndexOf('user');

/** Every marker in the output with the text that holds it. */
function markersIn(msgs: readonly ChatMessage[]) {
  return msgs.flatMap((m, k) =>
    parseMarkers(contentText(m.content)).map((info) => ({ info, k, role: m.role })),
  );
}

describe('drop markers never follow the latest user message as a user message', () => {
  const msgs = longTask(40);
  const latest = lastUserOf(msgs);
  const limit = Math.floor(tokenizer.countMessages(msgs) * 0.5);
  const options: FitOptions = { contextLimit: limit, outputReserve: 1000, compressFirst: false };

  it('drops agent work after the latest user message, whose marker goes into the tool output before it', () => {
    const fit = fitToContext(msgs, options, { tokenizer });
    const droppedAfter = fit.dropped.filter((i) => i > latest);
    expect(droppedAfter.length, 'the cut must reach past the latest user message').toBeGreaterThan(0);
    // the latest user message is the last user message of the output, unchanged
    const outLatest = lastUserOf(fit.messages);
    expect(fit.messageOrigin[outLatest]).toBe(latest);
    expect(fit.messages[outLatest]).toBe(msgs[latest]);
    // no inserted message after it
    expect(fit.messageOrigin.slice(outLatest + 1).every((o) => o >= 0)).toBe(true);
    // every dropped run after it has its marker, appended to the tool output right before the run
    const markers = markersIn(fit.messages).filter((m) => m.info.unit === 'messages');
    const after = markers.filter((m) => m.k > outLatest);
    expect(after.length).toBeGreaterThan(0);
    for (const m of after) {
      expect(m.role).toBe('tool');
      const host = fit.messageOrigin[m.k]!;
      expect(fit.changed.has(host)).toBe(true);
      expect(fit.dropped).toContain(host + 1);
      const original = JSON.parse(fit.ccrEntries.get(m.info.hash)!) as ChatMessage[];
      expect(original).toEqual(msgs.slice(host + 1, host + 1 + m.info.omitted));
      expect(original.some((o) => o.role === 'user')).toBe(false);
      // the output itself is still there, the marker after it
      expect(contentText(fit.messages[m.k]!.content).startsWith(contentText(msgs[host]!.content))).toBe(true);
    }
    expect(fit.tokens).toBe(tokenizer.countMessages(fit.messages));
    expect(toolPairsIntact(fit.messages)).toBe(true);
    assertValidChat(fit.messages);
    const view = toAnthropic(fit.messages);
    assertValidAnthropic(view);
  });

  it('keeps the first unit after the latest user message (nothing to host a marker before it)', () => {
    const fit = fitToContext(msgs, options, { tokenizer });
    expect(fit.dropped).not.toContain(latest + 1);
    expect(fit.dropped).not.toContain(latest + 2);
  });

  it('never lets the marker of the run before the latest user message open that message', () => {
    const late: ChatMessage[] = [sys('You are a coding agent.'), user('Start.'), assistant('Starting.')];
    for (let n = 0; n < 30; n += 1) late.push(...round(n, 'bash', `src/f${n}.ts`, 300));
    late.push(assistant(`Done with the first task. ${filler(99, 400)}`), user('Now the second task.'));
    for (let n = 30; n < 32; n += 1) late.push(...round(n, 'bash', `src/f${n}.ts`, 300));
    const at = lastUserOf(late);
    let reached = 0;
    for (const share of [0.14, 0.1, 0.08, 0.06])
      for (const mode of [{ intelligentContext: false }, { intelligentScoring: false }, {}]) {
        const fit = fitToContext(
          late,
          {
            contextLimit: Math.floor(tokenizer.countMessages(late) * share),
            outputReserve: 0,
            compressFirst: false,
            protectTurns: 1,
            ...mode,
          },
          { tokenizer },
        );
        if (fit.dropped.includes(at - 2)) reached += 1;
        const where = `share ${share} ${JSON.stringify(mode)}`;
        expect(fit.messages[lastUserOf(fit.messages)], where).toBe(late[at]);
        // in the messages format the latest user message holds only its own text
        const view = toAnthropic(fit.messages);
        const own = view.find((m) =>
          m.content.some((b) => b.type === 'text' && b.text === late[at]!.content),
        );
        expect(own!.content, where).toEqual([{ type: 'text', text: late[at]!.content }]);
        assertValidAnthropic(view);
      }
    expect(reached, 'cuts must reach the run right before the latest user message').toBeGreaterThan(0);
  });

  it('through the engine: the last user message is the real one, unchanged (chat and messages views)', () => {
    const input = structuredClone(msgs);
    const out = compressMessages(input, {
      model: 'gpt-4o',
      contextLimit: limit,
      outputReserve: 1000,
      compressFirst: false,
    });
    const res = out.result.messages;
    const outLatest = lastUserOf(res);
    expect(res[outLatest]).toEqual(msgs[latest]);
    expect(out.messageOrigin[outLatest]).toBe(latest);
    expect(out.result.transforms_applied.some((t) => t.startsWith('context:drop:'))).toBe(true);
    const view = toAnthropic(res);
    const lastText = view
      .flatMap((m) => (m.role === 'user' ? m.content : []))
      .filter((b) => b.type === 'text');
    expect(lastText.at(-1)).toEqual({ type: 'text', text: msgs[latest]!.content });
  });

  it('places the markers of a cut the same way when the cut is applied again on the next turn', () => {
    const memo = mapMemo();
    const one = fitToContext(msgs, { ...options, memo }, { tokenizer });
    expect(markersIn(one.messages).some((m) => m.role === 'tool')).toBe(true);
    const next = [...msgs, assistant('Renamed.'), user('Thanks, run the tests.')];
    const two = fitToContext(next, { ...options, memo }, { tokenizer });
    expect(two.transforms).toContain('context:reused_cut');
    expect(two.messages.slice(0, one.messages.length).map((m) => JSON.stringify(m))).toEqual(
      one.messages.map((m) => JSON.stringify(m)),
    );
  });
});
