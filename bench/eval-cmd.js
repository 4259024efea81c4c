#!/usr/bin/env node
// Stand-in for `svc compress` while scoring the engine with ../shared/eval:
// reads {model, messages} (or a bare messages array) on stdin, runs the built
// engine (dist/), prints the compression result JSON on stdout.
//   npx tsc -p tsconfig.build.json
//   node ../shared/eval/score.mjs --cases ../shared/eval/dev --cmd 'node bench/eval-cmd.js'
import { compressMessages } from '../dist/src/engine/index.js';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = JSON.parse(Buffer.concat(chunks).toString('utf8'));
const messages = Array.isArray(input) ? input : input.messages;
const model = (!Array.isArray(input) && input.model) || 'gpt-4o';
const { result } = compressMessages(messages, { model });
process.stdout.write(`${JSON.stringify(result)}\n`);
