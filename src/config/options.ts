/**
 * The one table of options: flag, environment variable, default, validation.
 * `resolveConfig` applies it (flag, then env, then default); commands build
 * their oclif flags from it; the README's option table is checked against it
 * by a test, so the three cannot drift.
 */

export type OptionKind = 'boolean' | 'integer' | 'number' | 'string' | 'list';
export type CommandName = 'serve' | 'compress' | 'stats' | 'history' | 'retrieve' | 'toin' | 'mcp' | 'doctor';

export interface OptionSpec {
  /** Key in `Config`. */
  key: keyof Config;
  /** Flag name without dashes; a boolean that defaults to true is negated as `--no-<flag>`. */
  flag?: string;
  env?: string;
  kind: OptionKind;
  default: Config[keyof Config];
  /** Allowed values for a string option. */
  choices?: readonly string[];
  /** Inclusive minimum / maximum for numbers; `minExclusive` for (0, 1] style ranges. */
  min?: number;
  max?: number;
  minExclusive?: boolean;
  description: string;
  commands: readonly CommandName[];
}

/** Resolved configuration. Paths are absolute after resolution. */
export interface Config {
  host: string;
  port: number;
  optimize: boolean;
  observe: boolean;
  cache: boolean;
  cacheMaxEntries: number;
  cacheTtl: number;
  cacheMaxBytes: number;
  memoMaxBytes: number;
  ccrMemoryMaxBytes: number;
  rateLimit: boolean;
  rateLimitRpm: number;
  rateLimitTpm: number;
  logFile: string | undefined;
  logLevel: 'error' | 'warn' | 'info' | 'debug';
  budget: number | undefined;
  budgetHourly: number | undefined;
  budgetMonthly: number | undefined;
  compatApiUrl: string;
  messagesApiUrl: string;
  upstreamTimeout: number;
  engineTimeout: number;
  maxBodyBytes: number;
  largeBodyBytes: number;
  apiKeys: string[];
  intelligentContext: boolean;
  intelligentScoring: boolean;
  compressFirst: boolean;
  lossless: boolean;
  contextLimit: number | undefined;
  protectTurns: number;
  scoreWeights: string | undefined;
  mlcompress: boolean;
  mlcompressDevice: 'auto' | 'cuda' | 'cpu' | 'mps';
  mlcompressRate: number;
  mlcompressModel: string;
  mlcompressTimeout: number;
  telemetry: boolean;
  telemetryUrl: string | undefined;
  sdk: string;
  home: string;
  savingsPath: string;
  pricingPath: string | undefined;
  ccrPath: string;
  ccrTtl: number;
  ccrMaxBytes: number;
  toinPath: string;
  store: string | undefined;
  storePrefix: string;
}

const ALL = ['serve', 'compress'] as const;
const SERVE = ['serve'] as const;

/** Every option of svc. Order is the README's order. */
export const OPTIONS: readonly OptionSpec[] = [
  {
    key: 'host',
    flag: 'host',
    env: 'SERVICE_HOST',
    kind: 'string',
    default: '127.0.0.1',
    description: 'bind host',
    commands: SERVE,
  },
  {
    key: 'port',
    flag: 'port',
    env: 'SERVICE_PORT',
    kind: 'integer',
    default: 8787,
    min: 0,
    max: 65535,
    description: 'bind port (0 picks a free one)',
    commands: SERVE,
  },
  {
    key: 'optimize',
    flag: 'optimize',
    kind: 'boolean',
    default: true,
    description: '`--no-optimize`: passthrough mode, requests are forwarded byte for byte',
    commands: SERVE,
  },
  {
    key: 'observe',
    flag: 'observe',
    env: 'SERVICE_OBSERVE',
    kind: 'boolean',
    default: false,
    description:
      'observe mode: requests are forwarded byte for byte (as `--no-optimize`); what compression would have saved is computed after each response and reported as `projected` savings',
    commands: SERVE,
  },
  {
    key: 'cache',
    flag: 'cache',
    kind: 'boolean',
    default: true,
    description: '`--no-cache`: disable the response cache',
    commands: SERVE,
  },
  {
    key: 'cacheMaxEntries',
    flag: 'cache-max-entries',
    env: 'SERVICE_CACHE_MAX_ENTRIES',
    kind: 'integer',
    default: 1000,
    min: 1,
    description: 'response cache: maximum entries (LRU)',
    commands: SERVE,
  },
  {
    key: 'cacheTtl',
    flag: 'cache-ttl',
    env: 'SERVICE_CACHE_TTL',
    kind: 'integer',
    default: 3600,
    min: 1,
    description: 'response cache: time to live in seconds',
    commands: SERVE,
  },
  {
    key: 'cacheMaxBytes',
    flag: 'cache-max-bytes',
    env: 'SERVICE_CACHE_MAX_BYTES',
    kind: 'integer',
    default: 256 * 1024 * 1024,
    min: 1024,
    description: 'response cache: maximum total bytes',
    commands: SERVE,
  },
  {
    key: 'memoMaxBytes',
    flag: 'memo-max-bytes',
    env: 'SERVICE_MEMO_MAX_BYTES',
    kind: 'integer',
    default: 16 * 1024 * 1024,
    min: 1024 * 1024,
    description: 'memory of the in-process memos (docs/stats.md lists them), estimated bytes; LRU past it',
    commands: SERVE,
  },
  {
    key: 'ccrMemoryMaxBytes',
    flag: 'ccr-memory-max-bytes',
    env: 'SERVICE_CCR_MEMORY_MAX_BYTES',
    kind: 'integer',
    default: 4 * 1024 * 1024,
    min: 1024 * 1024,
    description:
      "the server's in-memory CCR store (without --store): bytes of originals kept in memory; the rest go to a spill file and stay redeemable (docs/proxy.md)",
    commands: SERVE,
  },
  {
    key: 'rateLimit',
    flag: 'rate-limit',
    kind: 'boolean',
    default: true,
    description: '`--no-rate-limit`: disable rate limiting',
    commands: SERVE,
  },
  {
    key: 'rateLimitRpm',
    flag: 'rate-limit-rpm',
    env: 'SERVICE_RATE_LIMIT_RPM',
    kind: 'integer',
    default: 600,
    min: 1,
    description: 'requests per minute per API key',
    commands: SERVE,
  },
  {
    key: 'rateLimitTpm',
    flag: 'rate-limit-tpm',
    env: 'SERVICE_RATE_LIMIT_TPM',
    kind: 'integer',
    default: 2_000_000,
    min: 1,
    description: 'tokens per minute per API key',
    commands: SERVE,
  },
  {
    key: 'logFile',
    flag: 'log-file',
    env: 'SERVICE_LOG_FILE',
    kind: 'string',
    default: undefined,
    description: 'path of a JSONL request log',
    commands: SERVE,
  },
  {
    key: 'logLevel',
    flag: 'log-level',
    env: 'SERVICE_LOG_LEVEL',
    kind: 'string',
    default: 'info',
    choices: ['error', 'warn', 'info', 'debug'],
    description: 'log verbosity',
    commands: ALL,
  },
  {
    key: 'budget',
    flag: 'budget',
    env: 'SERVICE_BUDGET',
    kind: 'number',
    default: undefined,
    min: 0,
    description: 'daily budget in USD',
    commands: SERVE,
  },
  {
    key: 'budgetHourly',
    flag: 'budget-hourly',
    env: 'SERVICE_BUDGET_HOURLY',
    kind: 'number',
    default: undefined,
    min: 0,
    description: 'hourly budget in USD',
    commands: SERVE,
  },
  {
    key: 'budgetMonthly',
    flag: 'budget-monthly',
    env: 'SERVICE_BUDGET_MONTHLY',
    kind: 'number',
    default: undefined,
    min: 0,
    description: 'monthly budget in USD',
    commands: SERVE,
  },
  {
    key: 'compatApiUrl',
    flag: 'compat-api-url',
    env: 'COMPAT_TARGET_API_URL',
    kind: 'string',
    default: 'https://api.openai.com/v1',
    description: 'upstream base URL (up to /v1) for the chat-completions format',
    commands: ['serve', 'doctor'],
  },
  {
    key: 'messagesApiUrl',
    flag: 'messages-api-url',
    env: 'MESSAGES_TARGET_API_URL',
    kind: 'string',
    default: 'https://api.anthropic.com/v1',
    description: 'upstream base URL (up to /v1) for the messages format',
    commands: ['serve', 'doctor'],
  },
  {
    key: 'upstreamTimeout',
    flag: 'upstream-timeout',
    env: 'SERVICE_UPSTREAM_TIMEOUT',
    kind: 'integer',
    default: 600_000,
    min: 1,
    description: 'upstream timeout in ms (no response headers, or no body data, for this long: 504)',
    commands: SERVE,
  },
  {
    key: 'engineTimeout',
    flag: 'engine-timeout',
    env: 'SERVICE_ENGINE_TIMEOUT',
    kind: 'integer',
    default: 5000,
    min: 0,
    description:
      'time budget of the engine per request in ms; past it the original request is forwarded and counted as a compression failure (0: no limit)',
    commands: SERVE,
  },
  {
    key: 'maxBodyBytes',
    flag: 'max-body-bytes',
    env: 'SERVICE_MAX_BODY_BYTES',
    kind: 'integer',
    default: 64 * 1024 * 1024,
    min: 1,
    description: 'largest request body accepted (413 above)',
    commands: SERVE,
  },
  {
    key: 'largeBodyBytes',
    flag: 'large-body-bytes',
    env: 'SERVICE_LARGE_BODY_BYTES',
    kind: 'integer',
    default: 1024 * 1024,
    min: 0,
    description:
      'request bodies of this many bytes or more are parsed, counted and compressed in a worker thread, off the event loop (0: never)',
    commands: SERVE,
  },
  {
    key: 'apiKeys',
    flag: 'api-key',
    env: 'SERVICE_API_KEYS',
    kind: 'list',
    default: [],
    description: 'keys accepted by /v1/compress (repeat the flag; env is comma-separated); none: open',
    commands: SERVE,
  },
  {
    key: 'intelligentContext',
    flag: 'intelligent-context',
    kind: 'boolean',
    default: true,
    description: '`--no-intelligent-context`: legacy rolling window (drop oldest first)',
    commands: ALL,
  },
  {
    key: 'intelligentScoring',
    flag: 'intelligent-scoring',
    kind: 'boolean',
    default: true,
    description: '`--no-intelligent-scoring`: position-based scores',
    commands: ALL,
  },
  {
    key: 'compressFirst',
    flag: 'compress-first',
    kind: 'boolean',
    default: true,
    description: '`--no-compress-first`: do not compress harder before dropping',
    commands: ALL,
  },
  {
    key: 'lossless',
    flag: 'lossless',
    env: 'SERVICE_LOSSLESS',
    kind: 'boolean',
    default: false,
    description:
      'reversible transforms only: no markers, no CCR entries, no dropped messages (for agents that cannot retrieve); ML compression is skipped',
    commands: ALL,
  },
  {
    key: 'contextLimit',
    flag: 'context-limit',
    env: 'SERVICE_CONTEXT_LIMIT',
    kind: 'integer',
    default: undefined,
    min: 1,
    description: "context limit in tokens (default: the model's, from data/models.json)",
    commands: ALL,
  },
  {
    key: 'protectTurns',
    flag: 'protect-turns',
    env: 'SERVICE_PROTECT_TURNS',
    kind: 'integer',
    default: 4,
    min: 0,
    description: 'last N turns never dropped by the context manager',
    commands: ALL,
  },
  {
    key: 'scoreWeights',
    flag: 'score-weights',
    env: 'SERVICE_SCORE_WEIGHTS',
    kind: 'string',
    default: undefined,
    description: 'context scoring weights, e.g. `recency=1,similarity=1,toin=0.5,errors=1,references=1`',
    commands: ALL,
  },
  {
    key: 'mlcompress',
    flag: 'mlcompress',
    kind: 'boolean',
    default: false,
    description: 'enable ML compression (optional dependencies)',
    commands: ['serve', 'compress', 'doctor'],
  },
  {
    key: 'mlcompressDevice',
    flag: 'mlcompress-device',
    env: 'SERVICE_MLCOMPRESS_DEVICE',
    kind: 'string',
    default: 'auto',
    choices: ['auto', 'cuda', 'cpu', 'mps'],
    description: 'ML compression device',
    commands: ALL,
  },
  {
    key: 'mlcompressRate',
    flag: 'mlcompress-rate',
    env: 'SERVICE_MLCOMPRESS_RATE',
    kind: 'number',
    default: 0.3,
    min: 0,
    max: 1,
    minExclusive: true,
    description: 'ML compression target rate in (0, 1]: 0.3 keeps 30% of tokens',
    commands: ALL,
  },
  {
    key: 'mlcompressModel',
    flag: 'mlcompress-model',
    env: 'SERVICE_MLCOMPRESS_MODEL',
    kind: 'string',
    default: '~/.svc/models/mlcompress',
    description: 'folder with config.json, tokenizer.json, model.onnx',
    commands: ['serve', 'compress', 'doctor'],
  },
  {
    key: 'mlcompressTimeout',
    flag: 'mlcompress-timeout',
    env: 'SERVICE_MLCOMPRESS_TIMEOUT',
    kind: 'integer',
    default: 500,
    min: 1,
    description: 'ML compression time budget per request, ms',
    commands: ALL,
  },
  {
    key: 'telemetry',
    flag: 'telemetry',
    env: 'SERVICE_TELEMETRY',
    kind: 'boolean',
    default: true,
    description: '`--no-telemetry` or `SERVICE_TELEMETRY=off`: disable anonymous telemetry',
    commands: SERVE,
  },
  {
    key: 'telemetryUrl',
    env: 'SERVICE_TELEMETRY_URL',
    kind: 'string',
    default: undefined,
    description: 'where telemetry is sent; unset: nothing leaves the machine',
    commands: SERVE,
  },
  {
    key: 'sdk',
    env: 'SERVICE_SDK',
    kind: 'string',
    default: 'proxy',
    description: 'telemetry sdk label',
    commands: SERVE,
  },
  {
    key: 'home',
    env: 'SERVICE_HOME',
    kind: 'string',
    default: '~/.svc',
    description: 'folder for svc state (savings file, CCR store, TOIN, models)',
    commands: ALL,
  },
  {
    key: 'savingsPath',
    env: 'SERVICE_SAVINGS_PATH',
    kind: 'string',
    default: '<home>/proxy_savings.json',
    description: 'durable savings file',
    commands: ALL,
  },
  {
    key: 'pricingPath',
    env: 'SERVICE_PRICING_PATH',
    kind: 'string',
    default: undefined,
    description: 'a pricing table that overrides data/pricing.json',
    commands: ALL,
  },
  {
    key: 'ccrPath',
    env: 'SERVICE_CCR_PATH',
    kind: 'string',
    default: '<home>/ccr',
    description: "folder of the durable CCR store and of the server's spill file",
    commands: ALL,
  },
  {
    key: 'ccrTtl',
    env: 'SERVICE_CCR_TTL',
    kind: 'integer',
    default: 7 * 24 * 3600,
    min: 1,
    description: 'CCR entry time to live in seconds',
    commands: ALL,
  },
  {
    key: 'ccrMaxBytes',
    env: 'SERVICE_CCR_MAX_BYTES',
    kind: 'integer',
    default: 512 * 1024 * 1024,
    min: 1024,
    description:
      "size cap in bytes of the durable CCR store (and of the server's spill file); oldest evicted past it",
    commands: ALL,
  },
  {
    key: 'toinPath',
    env: 'SERVICE_TOIN_PATH',
    kind: 'string',
    default: '<home>/toin.json',
    description: 'TOIN store file',
    commands: ALL,
  },
  {
    key: 'store',
    flag: 'store',
    env: 'SERVICE_STORE_URL',
    kind: 'string',
    default: undefined,
    description: 'shared state in Redis: `redis://HOST:PORT/DB` or `rediss://...`',
    commands: ['serve', 'history', 'mcp', 'doctor'],
  },
  {
    key: 'storePrefix',
    flag: 'store-prefix',
    env: 'SERVICE_STORE_PREFIX',
    kind: 'string',
    default: 'svc:',
    description: 'key prefix in the shared store',
    commands: ['serve', 'history', 'mcp', 'doctor'],
  },
];
