/**
 * The few members of the optional ML runtime (`onnxruntime-node`,
 * `@huggingface/tokenizers`) that the worker uses. Declared here so that the
 * build never needs the optional packages' own types: they are loaded at run
 * time with a dynamic `import()` and narrowed to these shapes.
 */

/** An int64 input or float32 output tensor. */
export interface OrtTensor {
  readonly data: unknown;
}

/** `new ort.Tensor(type, data, dims)`. */
export type OrtTensorConstructor = new (
  type: 'int64',
  data: BigInt64Array,
  dims: readonly number[],
) => OrtTensor;

/** A loaded model. */
export interface OrtSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>>;
}

/** The `onnxruntime-node` module. */
export interface OrtModule {
  Tensor: OrtTensorConstructor;
  InferenceSession: {
    create(
      model: Uint8Array,
      options: { executionProviders: string[]; logSeverityLevel: number },
    ): Promise<OrtSession>;
  };
}

/** A `@huggingface/tokenizers` tokenizer. */
export interface HfTokenizer {
  encode(text: string, options: { add_special_tokens: boolean }): { ids: readonly number[] };
}

/** The `@huggingface/tokenizers` module. */
export interface HfTokenizersModule {
  Tokenizer: new (tokenizerJson: unknown, config: object) => HfTokenizer;
}

/** Imports an optional package by a name the compiler does not resolve. */
export async function importOptional<T>(name: string): Promise<T> {
  return (await import(name)) as T;
}
