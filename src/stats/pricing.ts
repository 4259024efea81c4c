import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SvcError } from '../errors.js';
import { PACKAGE_ROOT } from '../version.js';

/** USD per million tokens for one model. */
export interface ModelPrice {
  input: number;
  output: number;
  cacheRead: number;
  /** Cache writes (Anthropic's 5-minute write; OpenAI bills writes as input). */
  cacheWrite: number;
  /** Anthropic's 1-hour cache write; the 5-minute rate when the table gives none. */
  cacheWrite1h: number;
}

/** A loaded pricing table: the shipped one, with a user's table merged over it. */
export interface PricingTable {
  /** Where the prices come from (the shipped file's `source`, or the override's). */
  source: string;
  /** Date the prices were taken (`as_of` of the file). */
  asOf: string;
  /** Files read, shipped one first. */
  files: string[];
  /** Model keys (exact ids), sorted. */
  keys: string[];
  /** Every exact id and documented alias -> its price. */
  prices: Map<string, ModelPrice>;
}

/** Where the shipped table lives. */
export const SHIPPED_PRICING_PATH: string = join(PACKAGE_ROOT, 'data', 'pricing.json');

const FIELDS = [
  ['input', 'input'],
  ['output', 'output'],
  ['cache_read', 'cacheRead'],
  ['cache_write', 'cacheWrite'],
  ['cache_write_1h', 'cacheWrite1h'],
] as const;

/** A missing rate falls back: cache read and write to input (no prompt caching), 1-hour write to the write. */
function fallback(e: Record<string, unknown>, key: (typeof FIELDS)[number][1]): unknown {
  if (key === 'cacheRead' || key === 'cacheWrite') return e.input;
  if (key === 'cacheWrite1h') return e.cache_write ?? e.input;
  return undefined;
}

function bad(file: string, message: string, cause?: unknown): SvcError {
  return new SvcError('SVC_BAD_CONFIG', `pricing table ${file}: ${message}`, { cause, details: { file } });
}

interface ParsedTable {
  source: string;
  asOf: string;
  prices: Map<string, ModelPrice>;
}

/** Reads and validates one pricing file; throws SVC_BAD_CONFIG naming the file and the entry. */
export function parsePricingFile(file: string): ParsedTable {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (cause) {
    throw bad(file, `cannot read it as JSON (${(cause as Error).message})`, cause);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw bad(file, 'expected a JSON object');
  const doc = raw as Record<string, unknown>;
  const models = doc.models;
  if (typeof models !== 'object' || models === null || Array.isArray(models)) {
    throw bad(file, '"models" must be an object of model name -> {input, output, cache_read, cache_write}');
  }
  const prices = new Map<string, ModelPrice>();
  for (const [name, entry] of Object.entries(models as Record<string, unknown>)) {
    if (typeof entry !== 'object' || entry === null) throw bad(file, `models["${name}"] must be an object`);
    const e = entry as Record<string, unknown>;
    const price = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cacheWrite1h: 0 };
    for (const [jsonKey, key] of FIELDS) {
      const value = e[jsonKey] ?? fallback(e, key);
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
        throw bad(file, `models["${name}"].${jsonKey} must be a number >= 0 (USD per million tokens)`);
      }
      price[key] = value;
    }
    prices.set(normalizeModel(name), price);
    const aliases = e.aliases ?? [];
    if (!Array.isArray(aliases) || aliases.some((a) => typeof a !== 'string' || a === '')) {
      throw bad(file, `models["${name}"].aliases must be a list of model ids`);
    }
    for (const alias of aliases as string[]) prices.set(normalizeModel(alias), price);
  }
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  return { source: text(doc.source), asOf: text(doc.as_of), prices };
}

/**
 * Loads the shipped table and, when `pricingPath` is set (`SERVICE_PRICING_PATH`),
 * merges the user's table over it: their entries replace or add models, the
 * others stay. Throws SVC_BAD_CONFIG for an unreadable or invalid file.
 */
export function loadPricing(options: { pricingPath?: string | undefined } = {}): PricingTable {
  const shipped = parsePricingFile(SHIPPED_PRICING_PATH);
  const files = [SHIPPED_PRICING_PATH];
  const prices = new Map(shipped.prices);
  let { source, asOf } = shipped;
  if (options.pricingPath) {
    const user = parsePricingFile(options.pricingPath);
    for (const [k, v] of user.prices) prices.set(k, v);
    files.push(options.pricingPath);
    source = user.source || `${options.pricingPath} over ${shipped.source}`;
    asOf = user.asOf || asOf;
  }
  const keys = [...prices.keys()].sort();
  return { source, asOf, files, keys, prices };
}

/**
 * Lower-cases a model name and strips routing prefixes and suffixes (`openai/`,
 * `anthropic.`, Vertex's `@date`, Bedrock's `-v1:0`), so
 * `anthropic/claude-sonnet-4-5@20250929` and
 * `us.anthropic.claude-sonnet-4-5-20250929-v1:0` read as `claude-sonnet-4-5-20250929`.
 * The id itself is kept whole: no prefix of it stands for it.
 */
export function normalizeModel(model: string): string {
  return model
    .trim()
    .toLowerCase()
    .replace(/^.*\//, '')
    .replace(/^((us|eu|apac)\.)?(anthropic|openai)\./, '')
    .replace('@', '-')
    .replace(/-v\d+(:\d+)?$/, '');
}

const MATCH_MEMO = new WeakMap<PricingTable, Map<string, string | null>>();
const MATCH_MEMO_MAX = 1000;

/**
 * The table key a model matches: its exact id or a documented alias listed
 * in the table (after routing prefixes are stripped). No prefix guessing:
 * `claude-opus-4-9` is not `claude-opus-4`, it is unknown. Undefined for a
 * model the table does not know (its cost is null, counted as unpriced).
 */
export function matchModel(table: PricingTable, model: string | undefined): string | undefined {
  if (!model) return undefined;
  let memo = MATCH_MEMO.get(table);
  if (!memo) {
    memo = new Map();
    MATCH_MEMO.set(table, memo);
  }
  const hit = memo.get(model);
  if (hit !== undefined) return hit ?? undefined;
  const m = normalizeModel(model);
  const key = table.prices.has(m) ? m : undefined;
  // Bounded: model names come from clients.
  if (memo.size >= MATCH_MEMO_MAX) memo.clear();
  memo.set(model, key ?? null);
  return key;
}

/** The price of a model, or undefined when unknown. */
export function priceFor(table: PricingTable, model: string | undefined): ModelPrice | undefined {
  const key = matchModel(table, model);
  return key === undefined ? undefined : table.prices.get(key);
}
