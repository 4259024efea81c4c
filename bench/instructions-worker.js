/**
 * Helper of bench/instructions.js (run under valgrind by it, not an area
 * bench): the request path of `svc serve` without HTTP, in process, from a
 * build at ROOT_DIR. Each request's bytes go through the proxy's body parser,
 * the messages format's read, the engine call (`compressAndStore`: the
 * default configuration but no time budget, a memo, originals stored in a
 * memory CCR store) and the splicer with its memo of written bodies
 * (encoding included), as `svc serve` handles a POST /v1/messages (no
 * guards, no stats, no socket). With `--against`, this same worker loads the
 * other build's modules.
 *
 *   node bench/instructions-worker.js ROOT_DIR fresh|same COUNT TOTAL [parse|engine|splice]
 *
 * fresh: the first COUNT of TOTAL different ~91k-token conversations
 * (bench/perf.js's bodies), each new; same: one of them COUNT times, the
 * memoized turn. TOTAL bodies' bytes are made whatever COUNT is, so two
 * runs with different counts differ only in the requests handled. The last
 * argument stops each request after that stage (default: the whole path).
 */
import { join } from 'node:path';
import { agentSession, bodyPool } from './lib/servers.js';

const [root, mode, countArg, totalArg, upTo = 'splice'] = process.argv.slice(2);
const count = Number(countArg);
const total = Number(totalArg);
const pool = bodyPool(agentSession, mode === 'same' ? 2 : total + 1, { agent: true });
// a Buffer per request, as each arrives from its own socket, made for every run alike
const same = Buffer.from(pool.same);
const bodies = Array.from({ length: total }, (_, i) =>
  mode === 'same' ? Buffer.from(same) : Buffer.from(pool.fresh(i)),
);

const load = (path) => import(join(root, 'dist', 'src', path));
const { PrefixParser } = await load('json/prefix-parse.js');
const { formatForPath, parseRequest } = await load('formats/index.js');
const { messagesList } = await load('formats/splice.js');
const { writeBody } = await load('server/proxy/splice-memo.js');
const { compressMessages } = await load('engine/index.js');
const { compressAndStore, createEngineMemo } = await load('compression.js');
const { resolveConfig } = await load('config/resolve.js');
const { createMemoryCcrStore } = await load('ccr/index.js');

const format = formatForPath('/v1/messages');
const parser = new PrefixParser();
// the proxy's engine call: the default configuration, one memo, originals stored in memory; no
// `--engine-timeout` (valgrind runs the engine some 50 times slower than its budget allows)
const compression = {
  config: { ...resolveConfig({ env: {} }), engineTimeout: 0 },
  compress: compressMessages,
  ccr: createMemoryCcrStore(),
  memo: createEngineMemo(),
};
let forwarded = 0;
for (let i = 0; i < count; i++) {
  const read = parser.parseBytes(bodies[i]);
  const parsed = parseRequest(format, read.value);
  if (upTo === 'parse') continue;
  const output = await compressAndStore(compression, parsed.messages, parsed.model ?? 'claude');
  if (upTo === 'engine') continue;
  const spliced = writeBody(format, read.text, parsed, output, read.hints, messagesList(format, read.value));
  forwarded += (spliced?.body ?? bodies[i]).length;
}
process.stdout.write(`${forwarded}\n`);
