import { describe, expect, it } from 'vitest';
import { tokenizerFor } from '../../src/engine/tokens.js';
import { messagesFormat, parseRequest } from '../../src/formats/index.js';
import { prefixShape, requestShape } from '../../src/stats/prefix-shape.js';

const body = () => ({
  model: 'gpt-4o',
  system: 'be brief',
  messages: [
    { role: 'user', content: 'count the lines' },
    { role: 'assistant', content: 'There are 12.' },
  ],
  tools: [{ name: 'run', description: 'runs a step', input_schema: { type: 'object' } }],
});

describe('requestShape', () => {
  it('gives the shape computed for a parsed request again for it, equal to a fresh computation', () => {
    const parsed = parseRequest(messagesFormat, body());
    const first = requestShape(tokenizerFor, parsed);
    expect(requestShape(tokenizerFor, parsed)).toBe(first);
    const fresh = parseRequest(messagesFormat, body());
    const recomputed = requestShape(tokenizerFor, fresh);
    expect(recomputed).not.toBe(first);
    expect(recomputed).toEqual(first);
    expect(first.cumulative).toEqual(
      prefixShape(tokenizerFor('gpt-4o'), body().tools, parsed.messages).cumulative,
    );
  });

  it('counts again with the tokenizer of another model', () => {
    const parsed = parseRequest(messagesFormat, body());
    const gpt = requestShape(tokenizerFor, parsed);
    const other = requestShape(() => tokenizerFor('gpt-3.5-turbo'), parsed);
    expect(other).not.toBe(gpt);
    expect(other.cumulative).toEqual(
      prefixShape(tokenizerFor('gpt-3.5-turbo'), body().tools, parsed.messages).cumulative,
    );
  });
});
