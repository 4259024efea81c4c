// Builds BERT-style token-classification ONNX models from JavaScript (no Python),
// for svc's ML-compression tests and bench. Weights come from a seeded PRNG, so
// the same arguments always give the same bytes. Used by scripts/make-ml-model.js.
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;

/** mulberry32: a small seeded PRNG. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class GraphBuilder {
  constructor(seed) {
    this.nodes = [];
    this.inits = [];
    this.n = 0;
    this.rand = prng(seed);
  }
  name(prefix) {
    this.n += 1;
    return `${prefix}_${this.n}`;
  }
  tensor(dims, data, type = FLOAT) {
    const name = this.name('w');
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    this.inits.push(onnx.TensorProto.create({ name, dims, dataType: type, rawData: bytes }));
    return name;
  }
  random(dims, scale = 0.02) {
    const size = dims.reduce((a, b) => a * b, 1);
    const data = new Float32Array(size);
    for (let i = 0; i < size; i++) data[i] = (this.rand() * 2 - 1) * scale;
    return this.tensor(dims, data);
  }
  const(dims, values) {
    return this.tensor(dims, Float32Array.from(values));
  }
  ints(values) {
    return this.tensor([values.length], BigInt64Array.from(values.map(BigInt)), INT64);
  }
  op(opType, inputs, attrs = {}) {
    const output = this.name(opType.toLowerCase());
    const attribute = Object.entries(attrs).map(([name, v]) =>
      typeof v === 'number' && Number.isInteger(v)
        ? onnx.AttributeProto.create({ name, type: onnx.AttributeProto.AttributeType.INT, i: v })
        : Array.isArray(v)
          ? onnx.AttributeProto.create({ name, type: onnx.AttributeProto.AttributeType.INTS, ints: v })
          : onnx.AttributeProto.create({ name, type: onnx.AttributeProto.AttributeType.FLOAT, f: v }),
    );
    this.nodes.push(onnx.NodeProto.create({ opType, input: inputs, output: [output], attribute }));
    return output;
  }
  linear(x, inDim, outDim) {
    return this.op('Add', [this.op('MatMul', [x, this.random([inDim, outDim])]), this.random([outDim])]);
  }
  layerNorm(x, dim) {
    return this.op(
      'LayerNormalization',
      [x, this.const([dim], new Array(dim).fill(1)), this.const([dim], new Array(dim).fill(0))],
      {
        axis: -1,
        epsilon: 1e-12,
      },
    );
  }
  gelu(x) {
    const erf = this.op('Erf', [this.op('Div', [x, this.const([], [Math.SQRT2])])]);
    return this.op('Mul', [
      this.op('Mul', [x, this.op('Add', [erf, this.const([], [1])])]),
      this.const([], [0.5]),
    ]);
  }
}

function attentionBias(g) {
  const maskF = g.op('Cast', ['attention_mask'], { to: FLOAT });
  const maskBias = g.op('Mul', [g.op('Sub', [g.const([], [1]), maskF]), g.const([], [-10000])]);
  return g.op('Unsqueeze', [maskBias, g.ints([1, 2])]);
}

/**
 * A BERT-style encoder with a 2-label token-classification head
 * (label 1 = keep). `layers: 0` gives embeddings + head only (tiny test model).
 * `bias` (optional Float32Array [vocab]) is added to the keep logit per token,
 * which lets a test model prefer or drop given tokens deterministically.
 */
export function buildTokenClassifier({
  vocab,
  hidden,
  layers,
  heads,
  intermediate,
  maxPositions = 512,
  seed = 1,
  keepBias,
}) {
  const g = new GraphBuilder(seed);
  const dh = hidden / heads;
  // embeddings: word + position, then LayerNorm
  const words = g.op('Gather', [g.random([vocab, hidden]), 'input_ids']);
  const seqLen = g.op(
    'Gather',
    [g.op('Shape', ['input_ids']), g.tensor([], BigInt64Array.from([1n]), INT64)],
    { axis: 0 },
  );
  const positions = g.op('Range', [
    g.tensor([], BigInt64Array.from([0n]), INT64),
    seqLen,
    g.tensor([], BigInt64Array.from([1n]), INT64),
  ]);
  const posEmb = g.op('Gather', [g.random([maxPositions, hidden]), positions]);
  let x = g.layerNorm(g.op('Add', [words, posEmb]), hidden);
  // attention mask -> additive bias [b,1,1,s] (only needed with attention layers)
  const mask4 = layers > 0 ? attentionBias(g) : undefined;
  const split = g.ints([0, 0, heads, dh]);
  const merge = g.ints([0, 0, hidden]);
  for (let l = 0; l < layers; l++) {
    const heads4 = (t) => g.op('Transpose', [g.op('Reshape', [t, split])], { perm: [0, 2, 1, 3] });
    const q = heads4(g.linear(x, hidden, hidden));
    const k = g.op('Transpose', [g.op('Reshape', [g.linear(x, hidden, hidden), split])], {
      perm: [0, 2, 3, 1],
    });
    const v = heads4(g.linear(x, hidden, hidden));
    const scores = g.op('Add', [g.op('Div', [g.op('MatMul', [q, k]), g.const([], [Math.sqrt(dh)])]), mask4]);
    const probs = g.op('Softmax', [scores], { axis: -1 });
    const ctx = g.op('Reshape', [
      g.op('Transpose', [g.op('MatMul', [probs, v])], { perm: [0, 2, 1, 3] }),
      merge,
    ]);
    x = g.layerNorm(g.op('Add', [x, g.linear(ctx, hidden, hidden)]), hidden);
    const ffn = g.linear(g.gelu(g.linear(x, hidden, intermediate)), intermediate, hidden);
    x = g.layerNorm(g.op('Add', [x, ffn]), hidden);
  }
  let logits = g.linear(x, hidden, 2);
  if (keepBias) {
    // per-token bias on the keep label: [vocab, 2] table gathered by id
    const table = new Float32Array(vocab * 2);
    for (let i = 0; i < vocab; i++) table[i * 2 + 1] = keepBias[i];
    logits = g.op('Add', [logits, g.op('Gather', [g.tensor([vocab, 2], table), 'input_ids'])]);
  }
  g.nodes[g.nodes.length - 1].output = ['logits'];
  const dynamic = (type, dims) => ({
    tensorType: {
      elemType: type,
      shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) },
    },
  });
  const graph = onnx.GraphProto.create({
    name: 'svc-token-classifier',
    node: g.nodes,
    initializer: g.inits,
    input: [
      onnx.ValueInfoProto.create({ name: 'input_ids', type: dynamic(INT64, ['batch', 'sequence']) }),
      onnx.ValueInfoProto.create({ name: 'attention_mask', type: dynamic(INT64, ['batch', 'sequence']) }),
    ],
    output: [onnx.ValueInfoProto.create({ name: 'logits', type: dynamic(FLOAT, ['batch', 'sequence', 2]) })],
  });
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: '', version: 17 }],
    graph,
    producerName: 'svc scripts/onnx-graph.js',
  });
  return onnx.ModelProto.encode(model).finish();
}
