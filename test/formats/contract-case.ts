import type { ProviderFormat } from '../../src/formats/index.js';

type Sse = ReadonlyArray<readonly [string | undefined, string]>;
type OneEvent = { readonly event: string | undefined; readonly data: string };

/** What the contract suite needs of one format: a body, a response with a call of svc's tool, usage, events. */
export interface ContractCase {
  readonly format: ProviderFormat;
  readonly body: Record<string, unknown>;
  /** A complete response whose one tool call is `svc_retrieve` with `{hash: 'abc'}`, its id ending in `_9`. */
  readonly response: Record<string, unknown>;
  /** A key the tool definition has. */
  readonly definitionKey: string;
  /** The upstream under the suite's URLs (https://anthropic.test/v1, https://openai.test/v1). */
  readonly upstream: string;
  /** A response body with 10 input and 2 output tokens. */
  readonly usageBody: Record<string, unknown>;
  readonly sse: {
    readonly final: OneEvent;
    readonly error: OneEvent;
    readonly data: OneEvent;
    /** A stream carrying 10 input and 2 output tokens. */
    readonly usage: Sse;
    /** One round: text ("let me look"), then a call of svc's tool. */
    readonly round: Sse;
  };
}
