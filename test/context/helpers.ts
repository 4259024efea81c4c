import type { CompressHarder } from '../../src/engine/context/types.js';
import { contentHash } from '../../src/engine/hash.js';
import { formatMarker } from '../../src/engine/markers.js';
import type { ChatMessage } from '../../src/engine/types.js';

export const sys = (text: string): ChatMessage => ({ role: 'system', content: text });
export const user = (text: string): ChatMessage => ({ role: 'user', content: text });
export const assistant = (text: string): ChatMessage => ({ role: 'assistant', content: text });
export const call = (
  id: string,
  name: string,
  args: Record<string, unknown>,
  text: string | null = null,
): ChatMessage => ({
  role: 'assistant',
  content: text,
  tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
});
export const result = (id: string, text: string): ChatMessage => ({
  role: 'tool',
  tool_call_id: id,
  content: text,
});

/** Deterministic filler text of about `words` words. */
export function filler(seed: number, words: number): string {
  const vocab = ['alpha', 'beta', 'gamma', 'delta', 'omega', 'sigma', 'kappa', 'lambda', 'theta', 'zeta'];
  const out: string[] = [];
  let x = seed * 7919 + 17;
  for (let i = 0; i < words; i += 1) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out.push(`${vocab[x % vocab.length]}${x % 97}`);
  }
  return out.join(' ');
}

/** A tool round: call + result, the result ~`words` words. */
export function round(n: number, name: string, path: string, words: number, extra = ''): ChatMessage[] {
  return [call(`call_${n}`, name, { path }), result(`call_${n}`, `${extra}${filler(n, words)}`)];
}

/**
 * An agent session: system, a task, then `rounds` tool rounds, a final answer
 * and a new user question every 5 rounds.
 */
export function agentSession(rounds: number, words = 200): ChatMessage[] {
  const msgs: ChatMessage[] = [sys('You are a coding agent.'), user('Fix the failing build in src/app.ts')];
  for (let n = 0; n < rounds; n += 1) {
    msgs.push(...round(n, n % 2 ? 'read_file' : 'bash', `src/file${n}.ts`, words));
    if (n % 5 === 4) msgs.push(assistant(`Step ${n} done.`), user(`Now look at module ${n + 1}`));
  }
  return msgs;
}

/**
 * Stand-in for the engine's compressors at lower keep budgets: keeps the
 * first 1/2^level of a tool result's words and stores the rest in CCR.
 */
export function standInHarder(messages: readonly ChatMessage[]): CompressHarder {
  return (index, level) => {
    const m = messages[index];
    if (m?.role !== 'tool' || typeof m.content !== 'string') return undefined;
    const words = m.content.split(' ');
    const keep = Math.max(1, Math.floor(words.length / 2 ** level));
    if (keep >= words.length) return undefined;
    const hash = contentHash(m.content);
    const marker = formatMarker({ hash, omitted: words.length - keep, unit: 'items' });
    return {
      message: { ...m, content: `${words.slice(0, keep).join(' ')} ${marker}` },
      ccrEntries: new Map([[hash, m.content]]),
      transforms: [`standin:${level}`],
    };
  };
}

/** True when every tool call id has exactly one result right after its call, and vice versa. */
export function toolPairsIntact(messages: readonly ChatMessage[]): boolean {
  for (let i = 0; i < messages.length; i += 1) {
    const m = messages[i]!;
    if (m.role === 'assistant' && m.tool_calls?.length) {
      const ids = new Set(m.tool_calls.map((c) => c.id));
      let j = i + 1;
      while (j < messages.length && messages[j]!.role === 'tool') {
        if (!ids.delete(String(messages[j]!.tool_call_id))) return false;
        j += 1;
      }
      if (ids.size > 0 && j < messages.length) return false;
    }
    if (m.role === 'tool') {
      let k = i - 1;
      while (k >= 0 && messages[k]!.role === 'tool') k -= 1;
      const owner = messages[k];
      if (!owner?.tool_calls?.some((c) => c.id === m.tool_call_id)) return false;
    }
  }
  return true;
}
