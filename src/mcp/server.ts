import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openFileCcrStore } from '../ccr/index.js';
import { retrieve } from '../ccr/retrieve.js';
import type { CcrStore } from '../ccr/store.js';
import type { Config } from '../config/options.js';
import { isSvcError } from '../errors.js';
import { loadStatsSnapshot } from '../stats/snapshot.js';
import { openToinStore } from '../toin/store.js';
import { VERSION } from '../version.js';
import { McpServer, StdioServerTransport, z } from './sdk.js';

/** What `svc mcp` works with. */
export interface McpOptions {
  config: Config;
  /** The svc server to use when it answers (`svc serve`'s address). */
  url: string;
  /** A key for that server's /v1/retrieve and /v1/compress when it requires one (SERVICE_API_KEY). */
  apiKey?: string;
  /** How long to wait for the server before using the local stores, ms. */
  timeoutMs?: number;
}

type ToolResult = { content: Array<{ type: 'text'; text: string }>; isError?: boolean };
const text = (t: string, isError = false): ToolResult => ({
  content: [{ type: 'text', text: t }],
  ...(isError ? { isError: true } : {}),
});

/** The local CCR store: Redis with --store (shared with `svc serve --store`), else the durable file store. */
async function openLocalCcr(config: Config): Promise<{ store: CcrStore; close: () => Promise<void> }> {
  if (config.store) {
    const { connectSharedStore } = await import('../store/redis.js');
    const { createRedisCcrStore } = await import('../ccr/redis-store.js');
    const { createLogger } = await import('../log.js');
    const shared = await connectSharedStore({
      url: config.store,
      prefix: config.storePrefix,
      logger: createLogger({ level: 'error' }),
    });
    return {
      store: createRedisCcrStore(shared, { ttlSeconds: config.ccrTtl, localMaxSize: 0 }),
      close: () => shared.close(),
    };
  }
  const store = openFileCcrStore(config);
  return { store, close: async () => store.close?.() };
}

/**
 * Calls the running svc server. Undefined when none answers (connection
 * refused, timeout): the caller then uses the local stores.
 */
async function callServer(
  options: McpOptions,
  path: string,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown> } | undefined> {
  try {
    const res = await fetch(`${options.url.replace(/\/+$/, '')}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': `svc-mcp/${VERSION}`,
        ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 2000),
    });
    const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    return { status: res.status, json };
  } catch {
    return undefined;
  }
}

function errorText(json: Record<string, unknown>): string {
  const e = json.error as { message?: string } | string | undefined;
  return typeof e === 'string' ? e : (e?.message ?? JSON.stringify(json));
}

/**
 * svc_retrieve: the running server first (its CCR store holds the markers of
 * the requests it compressed: memory, or Redis with --store), then the local
 * store (Redis with --store, else the durable file store of `svc compress`).
 */
export async function retrieveTool(
  options: McpOptions,
  hashInput: string,
  query: string | undefined,
): Promise<ToolResult> {
  const hash = hashInput
    .trim()
    .replace(/^hash=/, '')
    .toLowerCase();
  const q = query?.trim() ? query : undefined;
  const remote = await callServer(options, '/v1/retrieve', { hash, ...(q ? { query: q } : {}) });
  if (remote?.status === 200 && typeof remote.json.content === 'string') return text(remote.json.content);
  if (remote && remote.status !== 404 && remote.status < 500) return text(errorText(remote.json), true);
  let local: Awaited<ReturnType<typeof openLocalCcr>> | undefined;
  try {
    local = await openLocalCcr(options.config);
    const r = await retrieve(local.store, hash, q, options.config.ccrTtl);
    await learnRetrieval(options.config, hash, q);
    return text(r.content);
  } catch (err) {
    if (isSvcError(err)) {
      const where = remote ? '' : ` (no svc server answered at ${options.url})`;
      return text(`${err.message}${where}`, true);
    }
    throw err;
  } finally {
    await local?.close();
  }
}

/** Records a local retrieval in TOIN, as `svc retrieve` does (best effort). */
async function learnRetrieval(config: Config, hash: string, query: string | undefined): Promise<void> {
  if (config.store) return; // the fleet's TOIN lives in Redis; the servers learn from their own retrievals
  try {
    const { queryFields } = await import('../ccr/query.js');
    const toin = await openToinStore({ path: config.toinPath });
    if (toin.retrieved(hash, queryFields(query)).length > 0) await toin.flush();
  } catch {
    // TOIN is advisory
  }
}

/** Text to compress becomes one tool output (what svc compresses: a user's own words are kept). */
function textAsMessages(t: string): unknown[] {
  return [
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_text', type: 'function', function: { name: 'text', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'call_text', content: t },
  ];
}

interface CompressResultJson {
  messages: Array<{ role: string; content: unknown }>;
  [key: string]: unknown;
}

/**
 * svc_compress: through the running server's POST /v1/compress when it
 * answers (then it counts in that server's /stats), else in this process,
 * exactly as `svc compress` (originals to the local CCR store, savings to
 * the savings file).
 */
export async function compressTool(
  options: McpOptions,
  input: { messages?: unknown[]; text?: string; model?: string },
): Promise<ToolResult> {
  if ((input.messages === undefined) === (input.text === undefined))
    return text('give either messages (a chat messages array) or text', true);
  const messages = input.messages ?? textAsMessages(input.text ?? '');
  // The model only picks the tokenizer; the server's /v1/compress requires one.
  const body = { messages, model: input.model ?? 'gpt-4o' };
  let result: CompressResultJson | undefined;
  const remote = await callServer(options, '/v1/compress', body);
  if (remote?.status === 200) result = remote.json as CompressResultJson;
  else if (remote && remote.status < 500) return text(errorText(remote.json), true);
  else {
    const local = await compressLocally(options.config, body);
    if ('error' in local) return text(local.error, true);
    result = local.result;
  }
  if (input.text !== undefined) {
    const { messages: out, ...figures } = result;
    const tool = out.find((m) => m.role === 'tool');
    return text(JSON.stringify({ text: typeof tool?.content === 'string' ? tool.content : '', ...figures }));
  }
  return text(JSON.stringify(result));
}

async function compressLocally(
  config: Config,
  body: { messages: unknown[]; model?: string },
): Promise<{ result: CompressResultJson } | { error: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-mcp-'));
  try {
    const inFile = join(dir, 'input.json');
    const outFile = join(dir, 'output.json');
    await writeFile(inFile, JSON.stringify(body));
    const { runCompress } = await import('../cli/compress-run.js');
    let stderr = '';
    const local = config.store ? await openLocalCcr(config) : undefined;
    try {
      const code = await runCompress({
        files: [inFile],
        config,
        model: body.model,
        inputFormat: 'chat',
        output: outFile,
        messagesOnly: false,
        pretty: false,
        summary: false,
        failUnder: undefined,
        record: true,
        ...(local ? { ccr: local.store } : {}),
        stderr: (t) => {
          stderr += t;
        },
      });
      if (code !== 0)
        return { error: stderr.trim().replaceAll(inFile, 'input') || `compression failed (${code})` };
    } finally {
      await local?.close();
    }
    return { result: JSON.parse(await readFile(outFile, 'utf8')) as CompressResultJson };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** svc_stats: the running server's /stats, or the lifetime totals of the savings file. */
export async function statsTool(options: McpOptions): Promise<ToolResult> {
  const snapshot = await loadStatsSnapshot({ url: options.url, savingsPath: options.config.savingsPath });
  return text(JSON.stringify(snapshot));
}

/** The MCP server with its three tools (not yet connected). */
export function createMcpServer(options: McpOptions): McpServer {
  const server = new McpServer({ name: 'svc', version: VERSION });
  server.registerTool(
    'svc_retrieve',
    {
      title: 'Retrieve compressed content',
      description:
        'Returns the original content that svc replaced by a marker such as "[svc: 87 items omitted; retrieve with svc_retrieve hash=3fa9c2e1b4d5a6f7c8d9e0a1]". ' +
        'With a query, only the matching items or lines: words, "phrases", field=value.',
      inputSchema: z.object({
        hash: z.string().describe('the hash of the marker (24 hex digits)'),
        query: z.string().optional().describe('keep only matching items or lines'),
      }),
      annotations: { readOnlyHint: true },
    },
    async ({ hash, query }) => retrieveTool(options, hash, query),
  );
  server.registerTool(
    'svc_compress',
    {
      title: 'Compress messages or text',
      description:
        'Compresses chat messages (tool outputs: JSON, logs, search results, diffs, code) or a piece of text the way the svc proxy does, ' +
        'and returns the compression result: messages (or text), tokens before and after, and the CCR hashes of what was removed.',
      inputSchema: z.object({
        messages: z
          .array(z.record(z.string(), z.unknown()))
          .optional()
          .describe('chat messages: {role, content, tool_calls?, tool_call_id?}'),
        text: z.string().optional().describe('a tool output or document to compress (instead of messages)'),
        model: z.string().optional().describe('model for token counting (default gpt-4o)'),
      }),
    },
    async (input) => compressTool(options, input),
  );
  server.registerTool(
    'svc_stats',
    {
      title: 'svc savings statistics',
      description:
        "The running svc server's statistics (requests, tokens saved, cost), or the lifetime savings when no server answers.",
      inputSchema: z.object({}),
      annotations: { readOnlyHint: true },
    },
    async () => statsTool(options),
  );
  return server;
}

/** Runs the MCP server on stdin/stdout until the client closes the connection. */
export async function runMcpStdio(options: McpOptions): Promise<void> {
  const server = createMcpServer(options);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  process.stdin.on('end', () => void server.close());
  await closed;
}
