import { messagesFormat } from '../../../src/formats/index.js';
import { messagesBody } from '../bodies.js';
import type { ContractCase } from '../contract-case.js';

/** The contract suite's case for the messages format (test/formats/contract.test.ts). */
export const contractCase = {
  format: messagesFormat,
  body: messagesBody(),
  response: {
    content: [
      { type: 'text', text: 'let me look' },
      { type: 'tool_use', id: 'toolu_9', name: 'svc_retrieve', input: { hash: 'abc' } },
    ],
  },
  definitionKey: 'input_schema',
  upstream: 'https://anthropic.test/v1',
  usageBody: { usage: { input_tokens: 10, output_tokens: 2 } },
  sse: {
    final: { event: 'message_stop', data: '{"type":"message_stop"}' },
    error: { event: 'error', data: '{"type":"error","error":{"type":"overloaded_error"}}' },
    data: { event: 'ping', data: '{"type":"ping"}' },
    usage: [
      ['message_start', '{"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1}}}'],
      ['message_delta', '{"type":"message_delta","usage":{"output_tokens":2}}'],
    ],
    // one round: text, then a call of svc's tool
    round: [
      ['message_start', '{"type":"message_start","message":{"id":"m1","usage":{"input_tokens":1}}}'],
      [
        'content_block_start',
        '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
      ],
      [
        'content_block_delta',
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"let me look"}}',
      ],
      ['content_block_stop', '{"type":"content_block_stop","index":0}'],
      [
        'content_block_start',
        '{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_9","name":"svc_retrieve","input":{}}}',
      ],
      [
        'content_block_delta',
        '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"hash\\":\\"abc\\"}"}}',
      ],
      ['content_block_stop', '{"type":"content_block_stop","index":1}'],
      [
        'message_delta',
        '{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}',
      ],
      ['message_stop', '{"type":"message_stop"}'],
    ],
  },
} as const satisfies ContractCase;
