import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateSamples, generateSession, SAMPLES_DIR } from '../../fixtures/generate.js';
import { KINDS, toChatBody } from '../../fixtures/lib/conversation.js';
import { detectInput } from '../../src/cli/detect-input.js';
import { tokenizerFor } from '../../src/engine/tokens.js';
import type { ChatMessage } from '../../src/engine/types.js';

const CONTENT_TYPES = [
  'json-array',
  'json-nested',
  'logs',
  'build-logs',
  'grep',
  'diff',
  'code',
  'html',
  'prose',
];

describe('fixtures', () => {
  it('are made by the committed generator: the samples on disk are exactly its output', () => {
    const generated = generateSamples();
    expect([...generated.keys()].sort()).toEqual(readdirSync(SAMPLES_DIR).sort());
    for (const [name, text] of generated)
      expect(readFileSync(`${SAMPLES_DIR}/${name}`, 'utf8'), name).toBe(text);
  });

  it('cover every content type in both formats', () => {
    expect(Object.keys(KINDS).sort()).toEqual([...CONTENT_TYPES].sort());
    for (const kind of CONTENT_TYPES) {
      const chat = JSON.parse(readFileSync(`${SAMPLES_DIR}/${kind}.chat.json`, 'utf8'));
      const messages = JSON.parse(readFileSync(`${SAMPLES_DIR}/${kind}.messages.json`, 'utf8'));
      expect(detectInput(chat, kind).format).toBe('chat');
      expect(detectInput(messages, kind).format).toBe('messages');
    }
    const session = JSON.parse(readFileSync(`${SAMPLES_DIR}/agent-session.json`, 'utf8'));
    expect(session.messages.filter((m: ChatMessage) => m.role === 'tool')).toHaveLength(CONTENT_TYPES.length);
  });

  it('generate a large session of at least 200k tokens, deterministically', () => {
    const a = JSON.stringify(toChatBody(generateSession(250_000)));
    const b = JSON.stringify(toChatBody(generateSession(250_000)));
    expect(a).toBe(b);
    const tokens = tokenizerFor('gpt-4o').countMessages(JSON.parse(a).messages);
    expect(tokens).toBeGreaterThanOrEqual(200_000);
    expect(tokens).toBeLessThan(300_000);
  });
});
