import type { CompressContext } from '../../src/engine/compressors/types.js';

/** A fixed hash for markers in exact-output tests. */
export const HASH = 'abcdef0123456789abcdef01';

/** A compressor context with nothing earlier in the conversation. */
export function ctxOf(over: Partial<CompressContext> = {}): CompressContext {
  return {
    hash: HASH,
    userTerms: [],
    seen: new Set(),
    earlierLines: () => new Set(),
    earlierJson: () => new Set(),
    earlierEntities: () => new Map(),
    earlierLinkShapes: () => new Set(),
    ...over,
  };
}

/** Deterministic PRNG (mulberry32) for generated inputs. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

import type { ChatMessage } from '../../src/engine/types.js';

function logOutput(rand: () => number, tag: string): string {
  const lines: string[] = [];
  const n = 40 + Math.floor(rand() * 120);
  for (let i = 0; i < n; i++) {
    const level = rand() < 0.05 ? 'ERROR' : rand() < 0.1 ? 'WARN' : 'INFO';
    lines.push(
      `2025-02-0${1 + (i % 9)}T12:${String(i % 60).padStart(2, '0')}:00Z ${level} worker-${tag}-${Math.floor(rand() * 5)} job ${Math.floor(rand() * 1e5)} ${level === 'ERROR' ? 'failed: disk full' : 'done'}`,
    );
  }
  return lines.join('\n');
}

function jsonOutput(rand: () => number, tag: string): string {
  const items = [];
  const n = 10 + Math.floor(rand() * 80);
  for (let i = 0; i < n; i++)
    items.push({
      id: `${tag}-${i}`,
      state: rand() < 0.05 ? 'error' : 'ok',
      size: Math.floor(rand() * 1000),
      owner: { name: 'ops', team: 'platform' },
    });
  return JSON.stringify(rand() < 0.5 ? items : { items, count: n }, null, rand() < 0.5 ? 2 : undefined);
}

function grepOutput(rand: () => number, tag: string): string {
  const lines: string[] = [];
  for (let i = 0; i < 30 + Math.floor(rand() * 60); i++)
    lines.push(
      `lib/${tag}/mod${Math.floor(rand() * 6)}.ex:${1 + Math.floor(rand() * 400)}:  handle_event(${i}, state)`,
    );
  return lines.join('\n');
}

function codeOutput(rand: () => number, tag: string): string {
  const lines: string[] = [];
  for (let f = 0; f < 4 + Math.floor(rand() * 6); f++) {
    lines.push(`def handler_${tag}_${f}(request):`);
    for (let k = 0; k < 6; k++)
      lines.push(`    value_${k} = request.get("field_${k}")  # step ${k} of handler ${f}`);
    lines.push('    return value_0', '');
  }
  return lines.map((l, i) => `${String(i + 1).padStart(6)}→${l}`).join('\n');
}

/**
 * A generated agent conversation: a system prompt, user turns, assistant
 * tool calls and their outputs (logs, JSON, grep, code, small ones, text-part
 * arrays), images and thinking parts that must pass through. Deterministic
 * for a seed.
 */
export function generateConversation(seed: number, turns = 24): ChatMessage[] {
  const rand = rng(seed);
  const messages: ChatMessage[] = [{ role: 'system', content: `You are agent ${seed}. Use tools.` }];
  let call = 0;
  for (let t = 0; t < turns; t++) {
    const r = rand();
    if (r < 0.15) {
      const content: ChatMessage['content'] =
        rand() < 0.3
          ? [
              {
                type: 'text',
                text: `Look at worker-${seed}-${t} and job ${t}; here is what I see:\n${logOutput(rand, `u${t}`)}`,
              },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            ]
          : `Please check job-${t} on worker-${seed}-${t % 5}.`;
      messages.push({ role: 'user', content });
      continue;
    }
    const id = `call_${seed}_${call++}`;
    const kind = Math.floor(rand() * 6);
    const assistant: ChatMessage = {
      role: 'assistant',
      content:
        rand() < 0.3
          ? [
              { type: 'thinking', thinking: 'plan the next step', signature: 'sig==' },
              { type: 'text', text: 'Checking.' },
            ]
          : null,
      tool_calls: [
        {
          id,
          type: 'function',
          function: {
            name: ['logs', 'query', 'grep', 'read', 'ping', 'list'][kind]!,
            arguments: `{"t":${t}}`,
          },
        },
      ],
    };
    messages.push(assistant);
    const tag = `${seed}x${t}`;
    const out = [logOutput, jsonOutput, grepOutput, codeOutput, () => 'pong', logOutput][kind]!(rand, tag);
    messages.push({
      role: 'tool',
      tool_call_id: id,
      content: kind === 5 ? [{ type: 'text', text: out }] : out,
    });
  }
  messages.push({ role: 'user', content: `Summarize what you found for worker-${seed}-1.` });
  return messages;
}

/** `length` characters drawn from `alphabet` by `rand` (for fuzzed lines and texts). */
export function randomString(rand: () => number, alphabet: readonly string[], length: number): string {
  let s = '';
  for (let j = 0; j < length; j++) s += alphabet[Math.floor(rand() * alphabet.length)];
  return s;
}

/**
 * Pieces identifiers are made of and end at (`identifiers.ts`): letters,
 * digits, marks, trailing punctuation, spaces; fuzzed texts add their own.
 */
export const IDENTIFIER_PIECES: readonly string[] = [
  'a',
  'Z',
  '7',
  '0',
  '_',
  '.',
  ':',
  '/',
  '@',
  '#',
  '-',
  ',',
  ';',
  ' ',
  ' ',
];
