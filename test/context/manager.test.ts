import { describe, expect, it } from 'vitest';
import { fitToContext } from '../../src/engine/context/manager.js';
import type { FitOptions } from '../../src/engine/context/types.js';
import { parseMarkers } from '../../src/engine/markers.js';
import { tokenizerFor } from '../../src/engine/tokens.js';
import type { ChatMessage, ContentMemo } from '../../src/engine/types.js';
import { assertValidAnthropic, assertValidChat, toAnthropic } from './anthropic-view.js';
import {
  agentSession,
  assistant,
  call,
  filler,
  result,
  round,
  standInHarder,
  sys,
  toolPairsIntact,
  user,
} from './helpers.js';

const tokenizer = tokenizerFor('gpt-4o');
const total = (m: ChatMessage[]) => tokenizer.countMessages(m);

function mapMemo(): ContentMemo & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return { map, get: (k) => map.get(k), set: (k, v) => void map.set(k, v) };
}

/** Spans of dropped input indices, from the output's origin map. */
function droppedSpans(origin: number[], n: number): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  const kept = new Set(origin.filter((o) => o >= 0));
  for (let i = 0; i < n; i += 1) {
    if (kept.has(i)) continue;
    const last = spans[spans.length - 1];
    if (last && last[1] === i) last[1] = i + 1;
    else spans.push([i, i + 1]);
  }
  return spans;
}

describe('fitToContext below the limit', () => {
  it('returns every message untouched', () => {
    const msgs = agentSession(10, 50);
    const fit = fitToContext(msgs, { contextLimit: 1_000_000, outputReserve: 4096 }, { tokenizer });
    expect(fit.messages).toEqual(msgs);
    for (const [i, m] of fit.messages.entries()) expect(m).toBe(msgs[i]);
    expect(fit.messageOrigin).toEqual(msgs.map((_, i) => i));
    expect(fit.transforms).toEqual([]);
    expect(fit.ccrEntries.size).toBe(0);
  });

  it('drops nothing for an unknown model limit', () => {
    const msgs = agentSession(40, 200);
    const fit = fitToContext(msgs, { contextLimit: undefined, outputReserve: 0 }, { tokenizer });
    expect(fit.messages).toEqual(msgs);
  });
});

describe('fitToContext over the limit', () => {
  const msgs = agentSession(60, 200);
  const before = total(msgs);
  const limit = Math.floor(before * 0.5);
  const options: FitOptions = { contextLimit: limit, outputReserve: 1000, compressFirst: false };

  it('cuts to fit with tool pairs intact and valid role order in both formats', () => {
    const fit = fitToContext(msgs, options, { tokenizer });
    expect(before).toBeGreaterThan(limit - 1000);
    expect(fit.tokens).toBe(total(fit.messages));
    expect(fit.tokens).toBeLessThanOrEqual(limit - 1000);
    expect(fit.dropped.length).toBeGreaterThan(0);
    expect(toolPairsIntact(fit.messages)).toBe(true);
    assertValidChat(fit.messages);
    assertValidAnthropic(toAnthropic(fit.messages));
    expect(fit.transforms).toContain(`context:drop:intelligent:${fit.dropped.length}`);
  });

  it('keeps the system prompt, the latest user message and the last 4 turns', () => {
    const fit = fitToContext(msgs, options, { tokenizer });
    expect(fit.messages[0]).toBe(msgs[0]);
    const lastUser = msgs.map((m) => m.role).lastIndexOf('user');
    expect(fit.messageOrigin).toContain(lastUser);
    const tail = fit.messageOrigin.slice(-8);
    expect(tail).toEqual(msgs.slice(-8).map((_, i) => msgs.length - 8 + i));
  });

  it('replaces each dropped run by one marker that redeems to the exact original messages', () => {
    const fit = fitToContext(msgs, options, { tokenizer });
    const spans = droppedSpans(fit.messageOrigin, msgs.length);
    // a run of agent work after a tool output: the marker is appended to that output; else its own user message
    const markers = fit.messages.flatMap((m, i) =>
      parseMarkers(String(m.content))
        .filter((info) => info.unit === 'messages')
        .map((info) => ({ info, role: m.role, origin: fit.messageOrigin[i]! })),
    );
    expect(markers).toHaveLength(spans.length);
    expect(markers.some((m) => m.role === 'tool')).toBe(true);
    markers.forEach(({ info, role, origin }, k) => {
      const [start, end] = spans[k]!;
      if (role === 'tool') {
        expect(origin).toBe(start - 1);
        expect(msgs.slice(start, end).some((m) => m.role === 'user')).toBe(false);
      } else {
        expect(role).toBe('user');
        expect(origin).toBe(-1);
      }
      expect(info).toMatchObject({ omitted: end - start, unit: 'messages' });
      expect(info!.note).toMatch(/^(tools: [a-z_]+|\w+ messages)/);
      expect(fit.ccrEntries.get(info!.hash)).toBe(JSON.stringify(msgs.slice(start, end)));
    });
    expect(fit.observations.filter((o) => o.event === 'dropped').length).toBeGreaterThan(0);
  });

  it('stores the originals, not the per-message compressed forms', () => {
    const compressed = msgs.map((m) =>
      m.role === 'tool' ? { ...m, content: String(m.content).slice(0, 900) } : m,
    );
    const fit = fitToContext(compressed, options, { tokenizer, originals: msgs });
    const first = fit.messages.find((m) =>
      parseMarkers(String(m.content)).some((i) => i.unit === 'messages'),
    )!;
    const info = parseMarkers(String(first.content)).find((i) => i.unit === 'messages');
    const [start, end] = droppedSpans(fit.messageOrigin, msgs.length)[0]!;
    expect(fit.ccrEntries.get(info!.hash)).toBe(JSON.stringify(msgs.slice(start, end)));
  });

  it('is deterministic', () => {
    const a = fitToContext(msgs, options, { tokenizer });
    const b = fitToContext(structuredClone(msgs), options, { tokenizer });
    expect(JSON.stringify(b.messages)).toBe(JSON.stringify(a.messages));
  });

  it('keeps user text sent with tool results in the same provider message together with them', () => {
    const withText = [...msgs];
    withText.splice(10, 0, user('<system-reminder>todo list</system-reminder>'));
    const fit = fitToContext(withText, options, { tokenizer });
    assertValidAnthropic(toAnthropic(fit.messages));
    const kept = new Set(fit.messageOrigin);
    expect(kept.has(9)).toBe(kept.has(10));
  });

  it('reports an overflow when protected messages alone exceed the budget', () => {
    const fit = fitToContext(msgs, { contextLimit: 800, outputReserve: 0, protectTurns: 4 }, { tokenizer });
    expect(fit.transforms.some((t) => t.startsWith('context:overflow:'))).toBe(true);
    assertValidAnthropic(toAnthropic(fit.messages));
  });
});

describe('compress first', () => {
  const msgs = agentSession(60, 200);
  const limit = Math.floor(total(msgs) * 0.6);

  it('compresses older tool outputs harder before dropping anything', () => {
    const fit = fitToContext(
      msgs,
      { contextLimit: limit, outputReserve: 0 },
      { tokenizer, compressHarder: standInHarder(msgs) },
    );
    expect(fit.transforms[0]).toMatch(/^context:compress_harder:\d+$/);
    expect(fit.dropped).toEqual([]);
    expect(fit.tokens).toBeLessThanOrEqual(limit);
    for (const i of fit.changed) {
      const [info] = parseMarkers(String(fit.messages[fit.messageOrigin.indexOf(i)]!.content));
      expect(fit.ccrEntries.get(info!.hash)).toBe(msgs[i]!.content);
    }
    expect(fit.observations.some((o) => o.event === 'compressed')).toBe(true);
  });

  it('--no-compress-first drops instead', () => {
    const fit = fitToContext(
      msgs,
      { contextLimit: limit, outputReserve: 0, compressFirst: false },
      { tokenizer, compressHarder: standInHarder(msgs) },
    );
    expect(fit.dropped.length).toBeGreaterThan(0);
    expect(fit.transforms.some((t) => t.startsWith('context:compress_harder'))).toBe(false);
    // nothing compressed harder: the only changed messages are tool outputs holding a drop marker after them
    for (const i of fit.changed) {
      expect(fit.dropped).toContain(i + 1);
      const out = String(fit.messages[fit.messageOrigin.indexOf(i)]!.content);
      expect(out.startsWith(`${msgs[i]!.content}\n\n[svc: `)).toBe(true);
    }
  });

  it('drops after compressing when compressing is not enough', () => {
    const fit = fitToContext(
      msgs,
      { contextLimit: Math.floor(limit / 3), outputReserve: 0 },
      { tokenizer, compressHarder: standInHarder(msgs) },
    );
    expect(fit.changed.size).toBeGreaterThan(0);
    expect(fit.dropped.length).toBeGreaterThan(0);
    expect(fit.tokens).toBeLessThanOrEqual(Math.floor(limit / 3));
    assertValidAnthropic(toAnthropic(fit.messages));
  });
});

describe('the three modes', () => {
  // An early unit with an error in a file the latest question names, among plain rounds.
  const msgs: ChatMessage[] = [
    sys('agent'),
    user('investigate'),
    ...round(0, 'bash', 'src/a.ts', 200),
    call('c_err', 'bash', { cmd: 'npm test' }),
    result(
      'c_err',
      `${filler(99, 150)}\nError: expected 3 got 4 in src/billing/invoice_total.ts\n    at total (src/billing/invoice_total.ts:12:3)\nexit code 1`,
    ),
    ...Array.from({ length: 30 }, (_, n) => round(n + 1, 'read_file', `src/other${n}.ts`, 200)).flat(),
    assistant('I looked at many files.'),
    user('why does src/billing/invoice_total.ts fail?'),
  ];
  const errIndex = msgs.findIndex((m) => m.tool_call_id === 'c_err');
  const limit = Math.floor(total(msgs) * 0.5);
  const base: FitOptions = { contextLimit: limit, outputReserve: 0, compressFirst: false };

  it('intelligent scoring keeps the old failing unit the question is about', () => {
    const fit = fitToContext(msgs, base, { tokenizer });
    expect(fit.messageOrigin).toContain(errIndex);
    expect(fit.messageOrigin).not.toContain(errIndex - 2);
  });

  it('--no-intelligent-scoring drops by position, oldest first', () => {
    const fit = fitToContext(msgs, { ...base, intelligentScoring: false }, { tokenizer });
    expect(fit.messageOrigin).not.toContain(errIndex);
    expect(fit.transforms).toContain(`context:drop:position:${fit.dropped.length}`);
    // Oldest first: one contiguous run from the start (a lone small message may stay: a marker would cost more).
    const first = Math.min(...fit.dropped);
    expect(first).toBeLessThanOrEqual(2);
    expect(fit.dropped).toEqual(fit.dropped.map((_, k) => first + k));
  });

  it('--no-intelligent-context: the legacy rolling window drops the oldest and only just enough', () => {
    const rolling = fitToContext(msgs, { ...base, intelligentContext: false }, { tokenizer });
    const position = fitToContext(msgs, { ...base, intelligentScoring: false }, { tokenizer });
    expect(rolling.messageOrigin).not.toContain(errIndex);
    expect(rolling.transforms).toContain(`context:drop:rolling_window:${rolling.dropped.length}`);
    expect(rolling.dropped.length).toBeLessThan(position.dropped.length);
    expect(rolling.tokens).toBeLessThanOrEqual(limit);
    expect(rolling.tokens).toBeGreaterThan(limit * 0.9);
    expect(rolling.ccrEntries.size).toBeGreaterThan(0);
    assertValidAnthropic(toAnthropic(rolling.messages));
  });
});

describe('stability across turns', () => {
  it('reuses a cut so the forwarded prefix stays byte-identical until the next cut', () => {
    const session = agentSession(120, 150);
    const memo = mapMemo();
    const limit = Math.floor(total(session.slice(0, 120)) * 1.02);
    let previous: ChatMessage[] | undefined;
    let cuts = 0;
    let stableAfterCut = 0;
    for (let n = 100; n <= session.length; n += 2) {
      const turn = session.slice(0, n);
      if (turn[turn.length - 1]!.role === 'assistant') continue;
      const fit = fitToContext(turn, { contextLimit: limit, outputReserve: 0, memo }, { tokenizer });
      expect(fit.tokens).toBeLessThanOrEqual(limit);
      assertValidAnthropic(toAnthropic(fit.messages));
      const prefixKept =
        previous !== undefined &&
        JSON.stringify(fit.messages.slice(0, previous.length)) === JSON.stringify(previous);
      if (fit.dropped.length > 0 && !fit.transforms.includes('context:reused_cut')) cuts += 1;
      else if (fit.dropped.length > 0) {
        expect(prefixKept).toBe(true);
        stableAfterCut += 1;
      } else if (previous) expect(prefixKept).toBe(true);
      previous = fit.messages;
    }
    expect(cuts).toBeGreaterThanOrEqual(1);
    expect(stableAfterCut).toBeGreaterThan(cuts * 3);
  });
});
