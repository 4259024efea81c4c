/**
 * Helper of bench/instructions.js (run under valgrind by it, not an area
 * bench): the request path of `svc serve` without HTTP, in process, from a
 * build at ROOT_DIR. Each request's bytes go through the proxy's body parser,
 * the messages format's read, the engine with a memo and the splicer, as
 * `svc serve` handles a POST /v1/messages (no guards, no stats, no socket).
 *
 *   node bench/instructions-worker.js ROOT_DIR fresh|same COUNT TOTAL
 *
 * fresh: the first COUNT of TOTAL different ~91k-token conversations
 * (bench/perf.js's bodies), each new; same: one of them COUNT times, the
 * memoized turn. TOTAL bodies' bytes are made whatever COUNT is, so two
 * runs with different counts differ only in the requests handled.
 */
import { join } from 'node:path';
import { agentSession, bodyPool } from './lib/servers.js';

const [root, mode, countArg, totalArg] = process.argv.slice(2);
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
const { spliceRequest } = await load('formats/splice.js');
const { compressMessages } = await load('engine/index.js');
const { createEngineMemo } = await load('compression.js');

const format = formatForPath('/v1/messages');
const parser = new PrefixParser();
const memo = createEngineMemo();
let forwarded = 0;
for (let i = 0; i < count; i++) {
  const read = parser.parseBytes(bodies[i]);
  const parsed = parseRequest(format, read.value);
  const output = compressMessages(parsed.messages, { model: parsed.model ?? 'claude', memo });
  const spliced = spliceRequest(format, read.text, parsed, output, read.hints);
  forwarded += spliced === undefined ? read.text.length : Buffer.from(spliced).length;
}
process.stdout.write(`${forwarded}\n`);
