import { responsesFormat } from '../../../src/formats/responses/index.js';
import type { ContractCase } from '../contract-case.js';
import { callItem, responseEvents, responsesBody, textItem } from './bodies.js';

/** The contract suite's case for the Responses format (test/formats/contract.test.ts). */
export const contractCase = {
  format: responsesFormat,
  body: responsesBody(),
  response: { output: [textItem('let me look'), callItem('svc_retrieve', '{"hash":"abc"}')] },
  definitionKey: 'parameters',
  upstream: 'https://openai.test/v1',
  usageBody: { usage: { input_tokens: 10, output_tokens: 2 } },
  sse: {
    final: { event: 'response.completed', data: '{"type":"response.completed","response":{}}' },
    error: { event: 'response.failed', data: '{"type":"response.failed","response":{}}' },
    data: { event: 'response.output_text.delta', data: '{"type":"response.output_text.delta","delta":"hi"}' },
    usage: responseEvents([textItem('hi')], { input: 10, cached: 0, output: 2 }),
    round: responseEvents([textItem('let me look'), callItem('svc_retrieve', '{"hash":"abc"}')]),
  },
} as const satisfies ContractCase;
