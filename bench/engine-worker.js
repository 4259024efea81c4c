/**
 * One cold engine measurement in a fresh process (run by bench/engine.js):
 * loads the engine, compresses a fixture once cold and `runs` more times warm,
 * prints one JSON line.
 */
import { readFileSync } from 'node:fs';

const [file, runs = '3'] = process.argv.slice(2);
const loadStart = performance.now();
const { compressMessages } = await import('../dist/src/engine/index.js');
const loadMs = performance.now() - loadStart;
const text = readFileSync(file, 'utf8');
const body = JSON.parse(text);
const options = { model: body.model ?? 'gpt-4o' };
let started = performance.now();
const cpuStart = process.cpuUsage();
const first = await compressMessages(body.messages, options);
const coldMs = performance.now() - started;
const cpu = process.cpuUsage(cpuStart);
const coldCpuMs = (cpu.user + cpu.system) / 1000;
const warmMs = [];
for (let i = 0; i < Number(runs); i++) {
  started = performance.now();
  await compressMessages(body.messages, options);
  warmMs.push(performance.now() - started);
}
const { result } = first;
console.log(
  JSON.stringify({
    bytes: Buffer.byteLength(text),
    loadMs,
    coldMs,
    coldCpuMs,
    warmMs,
    tokensBefore: result.tokens_before,
    tokensAfter: result.tokens_after,
    rssMb: process.resourceUsage().maxRSS / 1024,
  }),
);
