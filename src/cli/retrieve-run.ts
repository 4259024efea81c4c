import { once } from 'node:events';
import { openFileCcrStore } from '../ccr/index.js';
import { matchQuery, queryFields } from '../ccr/query.js';
import type { CcrStore } from '../ccr/store.js';
import { resolveConfig } from '../config/resolve.js';
import { isContentHash } from '../engine/hash.js';
import { isSvcError } from '../errors.js';
import { openToinStore } from '../toin/store.js';

export interface RetrieveOptions {
  env?: Record<string, string | undefined>;
  /** Injectable for tests; default the file store of the configuration. */
  store?: CcrStore;
  stdout?: NodeJS.WritableStream;
  stderr?: (text: string) => void;
  /** Only the items or lines matching this query (see `matchQuery`). */
  query?: string;
}

function ttlText(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} day${seconds === 86_400 ? '' : 's'}`;
  if (seconds % 3_600 === 0) return `${seconds / 3_600} h`;
  return `${seconds} s`;
}

/**
 * `svc retrieve HASH`: writes the original stored under HASH to stdout,
 * exactly as stored. Returns the exit code: 0 found, 2 for a malformed,
 * unknown or expired hash (one line on stderr).
 */
export async function retrieveOriginal(input: string, options: RetrieveOptions = {}): Promise<number> {
  const stderr = options.stderr ?? ((text: string) => process.stderr.write(text));
  const fail = (message: string) => {
    stderr(`svc retrieve: error: ${message}\n`);
    return 2;
  };
  const hash = input
    .trim()
    .replace(/^hash=/, '')
    .toLowerCase();
  if (!isContentHash(hash))
    return fail(`"${input.slice(0, 60)}" is not a CCR hash (24 hex digits, as in a marker's hash=...)`);
  let config: ReturnType<typeof resolveConfig>;
  try {
    config = resolveConfig({ env: options.env ?? process.env });
  } catch (err) {
    if (isSvcError(err)) return fail(err.message);
    throw err;
  }
  const store = options.store ?? openFileCcrStore(config);
  let original: string | undefined;
  try {
    original = await store.get(hash);
  } catch (err) {
    if (isSvcError(err)) return fail(err.message);
    throw err;
  } finally {
    await store.close?.();
  }
  if (original === undefined) {
    return fail(
      `hash ${hash} is unknown or expired in ${config.ccrPath} (entries are kept ${ttlText(config.ccrTtl)}: SERVICE_CCR_TTL)`,
    );
  }
  const query = options.query?.trim() ? options.query : undefined;
  if (query !== undefined) original = matchQuery(original, query).content;
  await learnRetrieval(config.toinPath, hash, query);
  const stdout = options.stdout ?? process.stdout;
  // Exact bytes for pipes; a terminal also gets a final newline so the prompt starts on its own line.
  const tail = stdout === process.stdout && process.stdout.isTTY && !original.endsWith('\n') ? '\n' : '';
  if (!stdout.write(original + tail)) await once(stdout, 'drain');
  return 0;
}

/** Records the retrieval to TOIN (best effort: a TOIN problem never fails a retrieval). */
async function learnRetrieval(path: string, hash: string, query: string | undefined): Promise<void> {
  try {
    const toin = await openToinStore({ path });
    if (toin.retrieved(hash, queryFields(query)).length > 0) await toin.flush();
  } catch {
    // TOIN is advisory
  }
}
