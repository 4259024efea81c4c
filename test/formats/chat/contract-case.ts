import { chatFormat } from '../../../src/formats/index.js';
import { chatBody } from '../bodies.js';
import type { ContractCase } from '../contract-case.js';

/** The contract suite's case for the chat format (test/formats/contract.test.ts). */
export const contractCase = {
  format: chatFormat,
  body: chatBody(),
  response: {
    choices: [
      {
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_9',
              type: 'function',
              function: { name: 'svc_retrieve', arguments: '{"hash":"abc"}' },
            },
          ],
        },
      },
    ],
  },
  definitionKey: 'function',
  upstream: 'https://openai.test/v1',
  usageBody: { usage: { prompt_tokens: 10, completion_tokens: 2 } },
  sse: {
    final: { event: undefined, data: '[DONE]' },
    error: { event: undefined, data: '{"error":{"message":"overloaded"}}' },
    data: { event: undefined, data: '{"id":"c1","choices":[{"delta":{"content":"hi"}}]}' },
    usage: [
      [undefined, '{"id":"c1","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2}}'],
      [undefined, '[DONE]'],
    ],
    round: [
      [undefined, '{"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":"let me look"}}]}'],
      [
        undefined,
        '{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_9","type":"function","function":{"name":"svc_retrieve","arguments":""}}]}}]}',
      ],
      [
        undefined,
        '{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"hash\\":\\"abc\\"}"}}]}}]}',
      ],
      [undefined, '{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}'],
      [undefined, '[DONE]'],
    ],
  },
} as const satisfies ContractCase;
