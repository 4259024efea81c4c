#!/usr/bin/env node
// Writes a token-classification model folder (config.json, tokenizer.json,
// model.onnx) for svc's ML compression, entirely offline:
//   node scripts/make-ml-model.js --kind tiny --out DIR        (tests: ~100 KB, deterministic)
//   node scripts/make-ml-model.js --kind tinybert --out DIR    (bench: TinyBERT shapes, random weights)
//   node scripts/make-ml-model.js --kind bert-base --out DIR   (bench: BERT-base shapes, random weights)
// The tiny model is a real ONNX graph (embeddings, LayerNorm, classifier head)
// whose keep-logit is biased per token: stop words low, other words high.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildTokenClassifier } from './onnx-graph.js';

const KINDS = {
  tiny: { hidden: 16, layers: 0, heads: 2, intermediate: 32, vocab: 0 },
  tinybert: { hidden: 312, layers: 4, heads: 12, intermediate: 1200, vocab: 30522 },
  'bert-base': { hidden: 768, layers: 12, heads: 12, intermediate: 3072, vocab: 30522 },
};

export const STOP_WORDS = (
  'the a an of and or to in on at by for with from is are was were be been being this that these those it its ' +
  'as but if then than so such not no can could would should will may might do does did has have had i you he she ' +
  'we they them their there here which who whom what when where why how all any each some very just also into over ' +
  'about after before more most other only own same too up down out off again further once'
).split(' ');

function vocabulary(size) {
  const special = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
  const chars = [...'abcdefghijklmnopqrstuvwxyz0123456789'];
  const punct = [...'.,;:!?()[]{}<>"\'`/\\-_=+*&^%$#@~|'];
  const words = [
    ...STOP_WORDS,
    ...'error fail failed warning service request response timeout memory disk user file path server client data value result'.split(
      ' ',
    ),
  ];
  const list = [
    ...new Set([
      ...special,
      ...words,
      ...chars,
      ...punct,
      ...chars.map((c) => `##${c}`),
      ...punct.map((c) => `##${c}`),
    ]),
  ];
  for (let i = 0; list.length < size; i++) list.push(`##filler${i}`);
  return list;
}

function keepBias(vocab) {
  const stop = new Set(STOP_WORDS);
  return Float32Array.from(vocab, (tok) => (stop.has(tok) ? -6 : tok.startsWith('[') ? 0 : 3));
}

/** Writes the model folder; returns its file paths. */
export function makeModel(kind, out, seed = 7) {
  const spec = KINDS[kind];
  if (!spec) throw new Error(`unknown --kind ${kind}; one of ${Object.keys(KINDS).join(', ')}`);
  const vocab = vocabulary(spec.vocab);
  mkdirSync(out, { recursive: true });
  const tokenizer = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: vocab.slice(0, 5).map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: null,
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(vocab.map((t, i) => [t, i])),
    },
  };
  const config = {
    architectures: ['BertForTokenClassification'],
    model_type: 'bert',
    hidden_size: spec.hidden,
    num_hidden_layers: spec.layers,
    num_attention_heads: spec.heads,
    intermediate_size: spec.intermediate,
    vocab_size: vocab.length,
    max_position_embeddings: 512,
    id2label: { 0: 'drop', 1: 'keep' },
    label2id: { drop: 0, keep: 1 },
    svc_generated: { kind, seed },
  };
  const model = buildTokenClassifier({
    vocab: vocab.length,
    hidden: spec.hidden,
    layers: spec.layers,
    heads: spec.heads,
    intermediate: spec.intermediate,
    seed,
    keepBias: kind === 'tiny' ? keepBias(vocab) : undefined,
  });
  const files = {
    config: join(out, 'config.json'),
    tokenizer: join(out, 'tokenizer.json'),
    model: join(out, 'model.onnx'),
  };
  writeFileSync(files.config, `${JSON.stringify(config, null, 2)}\n`);
  writeFileSync(files.tokenizer, JSON.stringify(tokenizer));
  writeFileSync(files.model, model);
  return files;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { kind: { type: 'string', default: 'tiny' }, out: { type: 'string' } },
  });
  if (!values.out) {
    console.error('usage: make-ml-model.js --kind tiny|tinybert|bert-base --out DIR');
    process.exit(2);
  }
  const files = makeModel(values.kind, values.out);
  console.log(`wrote ${Object.values(files).join(', ')}`);
}
