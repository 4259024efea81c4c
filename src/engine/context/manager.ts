import { lruOfEntries } from '../../lru.js';
import { textUnits, withTexts } from '../messages.js';
import { contentText } from '../tokens.js';
import type { ChatMessage } from '../types.js';
import { type CutDecision, findDecision, type PrefixKey, prefixChain, storeDecision } from './cut-memo.js';
import { type DroppedSpan, dropMarker, spansOf } from './drop-marker.js';
import { integrityProblems } from './integrity.js';
import { contextBudget } from './limits.js';
import { scoreUnits } from './scoring.js';
import { messageShape } from './shape.js';
import type { ContextUnit, FitDeps, FitOptions, FitResult, ShapeObservation } from './types.js';
import { buildUnits, markerHost } from './units.js';
import { resolveWeights } from './weights.js';

/**
 * When a cut is needed, the intelligent manager cuts down to this share of
 * the budget, so the next turns fit without another cut and the prefix stays
 * byte-identical for them (the legacy rolling window cuts to the budget).
 */
export const CUT_TARGET = 0.85;
/** Compress-first tries levels 1..MAX_HARDER_LEVEL (each keeps about half of the last). */
export const MAX_HARDER_LEVEL = 3;
/** Default number of recent turns that are never dropped. */
export const DEFAULT_PROTECT_TURNS = 4;

type Mode = 'intelligent' | 'position' | 'rolling_window';

/** Where cut decisions are remembered. */
interface MemoChain {
  memo: NonNullable<FitOptions['memo']>;
  key: PrefixKey;
  seed: string;
}

/** Mutable working state of one fit. */
interface Work {
  current: ChatMessage[];
  counts: number[];
  total: number;
  dropped: Set<number>;
  harder: Map<number, number>;
  ccrEntries: Map<string, string>;
  harderTransforms: string[];
  observations: ShapeObservation[];
  /** Drop markers made in this call, by span (`start:end`). */
  markers: Map<string, ReturnType<typeof dropMarker>>;
  /** Tokens of one message (memoized). */
  countOne: (m: ChatMessage) => number;
  /** Prefix keys of the originals, when the caller has them (cheap drop-marker memo keys). */
  prefixKey: PrefixKey | undefined;
}

/**
 * Cuts a conversation down to the model's context budget (limit minus output
 * reserve). Below the budget it returns the messages untouched: nothing is
 * ever dropped then. Above it: compress older tool outputs harder (unless
 * `compressFirst` is false), then drop the lowest-scored unprotected units
 * (or the oldest, in the rolling window), each dropped run replaced by one
 * marker whose original goes to `ccrEntries`. Pure and deterministic.
 *
 * @example
 * const fit = fitToContext(messages, { contextLimit: 128000, outputReserve: 4096 }, { tokenizer });
 */
export function fitToContext(
  messages: readonly ChatMessage[],
  options: FitOptions,
  deps: FitDeps,
): FitResult {
  const { tokenizer } = deps;
  const originals = deps.originals ?? messages;
  const budget = contextBudget(options.contextLimit, options.outputReserve);
  // Below the budget by the cheap upper bound: untouched, and counted only if asked (principle 4).
  const atMost = budget === undefined ? 0 : (tokenizer.countMessagesAtMost?.(messages, budget) ?? Infinity);
  if (atMost <= (budget ?? 0)) return untouched(messages, budget, tokenizer.countMessages);
  const base = tokenizer.countMessages([]);
  const counts = messages.map((m) => messageTokens(tokenizer, m, base));
  const total = base + counts.reduce((a, b) => a + b, 0);
  const work: Work = {
    current: [...messages],
    counts,
    total,
    dropped: new Set(),
    harder: new Map(),
    ccrEntries: new Map(),
    harderTransforms: [],
    observations: [],
    markers: new Map(),
    countOne: (m) => messageTokens(tokenizer, m, base),
    prefixKey: deps.prefixKey,
  };
  if (budget === undefined || total <= budget) return finish(messages, originals, work, budget, []);

  const mode: Mode =
    options.intelligentContext === false
      ? 'rolling_window'
      : options.intelligentScoring === false
        ? 'position'
        : 'intelligent';
  const protectTurns = options.protectTurns ?? DEFAULT_PROTECT_TURNS;
  const units = buildUnits(messages, protectTurns);
  const memo = mode === 'rolling_window' ? undefined : options.memo;
  const seed = seedOf(mode, options);
  const chain: MemoChain | undefined = memo
    ? { memo, key: deps.prefixKey ?? prefixChain(originals), seed }
    : undefined;
  const prior = chain ? findDecision(chain.memo, chain.key, messages.length, seed) : undefined;
  if (prior) {
    applyDecision(prior, work, deps);
    if (withMarkers(work, originals) <= budget) {
      return finish(messages, originals, work, budget, transformsOf(mode, work, true), chain);
    }
  }
  const target = mode === 'rolling_window' ? budget : Math.floor(budget * CUT_TARGET);
  const candidates = units.filter((u) => !u.protected && !isDropped(u, work));
  const order = orderCandidates(messages, candidates, mode, options);
  if (options.compressFirst !== false && deps.compressHarder) compressHarder(order, work, target, deps);
  for (const unit of order) {
    if (work.total + markerEstimate(work) <= target) break;
    if (!worthDropping(unit, work)) continue;
    dropUnit(unit, work);
  }
  fillGaps(order, work);
  // The estimate of marker sizes may be short: drop more until the exact count fits.
  for (const unit of order) {
    if (isDropped(unit, work) || !worthDropping(unit, work)) continue;
    if (withMarkers(work, originals) <= target) break;
    dropUnit(unit, work);
  }
  const guarded = unitBeforeLatestUser(units, messages);
  if (guarded && isDropped(guarded, work)) extendBack(units, guarded, work, messages);
  if (guarded && isDropped(guarded, work) && !markerFitsBefore(guarded, work, messages)) {
    // Its run's marker would have to open the latest user message: keep the unit, drop others instead.
    undropUnit(guarded, work);
    for (const unit of order) {
      if (unit === guarded || isDropped(unit, work) || !worthDropping(unit, work)) continue;
      if (withMarkers(work, originals) <= target) break;
      dropUnit(unit, work);
    }
  }
  const result = finish(messages, originals, work, budget, transformsOf(mode, work, false), chain);
  if (integrityProblems(result.messages).length > integrityProblems(messages).length) {
    // A cut must never make a valid conversation invalid; forward it whole instead.
    const whole: Work = {
      ...work,
      total,
      counts,
      current: [...messages],
      dropped: new Set<number>(),
      harder: new Map(),
      ccrEntries: new Map(),
      observations: [],
    };
    return finish(messages, originals, whole, budget, ['context:failed:integrity']);
  }
  return result;
}

/** The result of a fit that leaves `messages` as they are; `tokens` is counted when read. */
function untouched(
  messages: readonly ChatMessage[],
  budget: number | undefined,
  count: (m: readonly ChatMessage[]) => number,
): FitResult {
  let tokens: number | undefined;
  const fit: Omit<FitResult, 'tokens'> = {
    messages: [...messages],
    messageOrigin: messages.map((_, i) => i),
    changed: new Set(),
    ccrEntries: new Map(),
    transforms: [],
    observations: [],
    dropped: [],
    budget,
  };
  return Object.defineProperty(fit, 'tokens', {
    enumerable: true,
    get: () => (tokens ??= count(messages)),
  }) as FitResult;
}

/**
 * Tokens of one message. The tokenizer memoizes counts per message object and
 * per text, so a long conversation is not re-tokenized on every turn (principle 4).
 */
function messageTokens(tokenizer: FitDeps['tokenizer'], m: ChatMessage, base: number): number {
  return tokenizer.countMessages([m]) - base;
}

function seedOf(mode: Mode, options: FitOptions): string {
  return JSON.stringify([
    mode,
    options.compressFirst !== false,
    options.protectTurns ?? DEFAULT_PROTECT_TURNS,
    resolveWeights(options.scoreWeights),
  ]);
}

function isDropped(unit: ContextUnit, work: Work): boolean {
  return work.dropped.has(unit.start);
}

function orderCandidates(
  messages: readonly ChatMessage[],
  candidates: ContextUnit[],
  mode: Mode,
  options: FitOptions,
): ContextUnit[] {
  if (mode === 'rolling_window') return candidates;
  const scored = scoreUnits(messages, candidates, {
    intelligent: mode === 'intelligent',
    weights: resolveWeights(options.scoreWeights),
    toin: options.toin,
  });
  return scored.sort((a, b) => a.score - b.score || a.unit.index - b.unit.index).map((s) => s.unit);
}

function compressHarder(order: readonly ContextUnit[], work: Work, target: number, deps: FitDeps): void {
  for (let level = 1; level <= MAX_HARDER_LEVEL; level += 1) {
    for (const unit of order) {
      for (let i = unit.start; i < unit.end; i += 1) {
        if (work.total <= target) return;
        if (work.current[i]!.role !== 'tool') continue;
        applyHarder(i, level, work, deps);
      }
    }
  }
}

function applyHarder(index: number, level: number, work: Work, deps: FitDeps): boolean {
  const out = deps.compressHarder?.(index, level);
  if (!out) return false;
  const count = messageTokens(deps.tokenizer, out.message, deps.tokenizer.countMessages([]));
  if (count >= work.counts[index]!) return false;
  work.total += count - work.counts[index]!;
  work.counts[index] = count;
  work.current[index] = out.message;
  work.harder.set(index, level);
  for (const [hash, original] of out.ccrEntries) work.ccrEntries.set(hash, original);
  work.harderTransforms.push(...out.transforms);
  return true;
}

function unitTokens(unit: ContextUnit, work: Work): number {
  let sum = 0;
  for (let i = unit.start; i < unit.end; i += 1) sum += work.counts[i]!;
  return sum;
}

/** A small unit on its own would cost more as a new marker than it saves. */
function worthDropping(unit: ContextUnit, work: Work): boolean {
  if (work.dropped.has(unit.start - 1) || work.dropped.has(unit.end)) return true;
  return unitTokens(unit, work) > MARKER_TOKENS_ESTIMATE;
}

/** Drops small units between two dropped runs: one marker instead of two saves tokens. */
function fillGaps(order: readonly ContextUnit[], work: Work): void {
  for (const unit of order) {
    if (isDropped(unit, work)) continue;
    if (
      work.dropped.has(unit.start - 1) &&
      work.dropped.has(unit.end) &&
      unitTokens(unit, work) <= MARKER_TOKENS_ESTIMATE
    ) {
      dropUnit(unit, work);
    }
  }
}

function dropUnit(unit: ContextUnit, work: Work): void {
  for (let i = unit.start; i < unit.end; i += 1) {
    if (work.dropped.has(i)) continue;
    work.dropped.add(i);
    work.total -= work.counts[i]!;
  }
}

function undropUnit(unit: ContextUnit, work: Work): void {
  for (let i = unit.start; i < unit.end; i += 1) {
    if (!work.dropped.delete(i)) continue;
    work.total += work.counts[i]!;
  }
}

/** The unit right before the latest user message, when that message opens its own unit. */
function unitBeforeLatestUser(
  units: readonly ContextUnit[],
  messages: readonly ChatMessage[],
): ContextUnit | undefined {
  let latest = -1;
  for (let k = messages.length - 1; k >= 0 && latest < 0; k -= 1)
    if (messages[k]!.role === 'user') latest = k;
  const at = units.findIndex((u) => u.start === latest);
  return at > 0 ? units[at - 1] : undefined;
}

/**
 * Whether the dropped run that ends with `unit` (right before the latest user
 * message) has its marker anywhere but at the head of that message: appended
 * to the tool output before the run, or after a user-side message (where the
 * messages format merges it). Otherwise the messages format would put the
 * marker into the latest user message itself.
 */
function markerFitsBefore(unit: ContextUnit, work: Work, messages: readonly ChatMessage[]): boolean {
  let start = unit.start;
  while (start > 0 && work.dropped.has(start - 1)) start -= 1;
  const before = messages[start - 1];
  if (before === undefined) return false;
  if (hostsMarker(messages, { start, end: unit.end }, start - 1)) return true;
  return before.role === 'user' || before.role === 'tool';
}

/**
 * While the run ending with `unit` has its marker nowhere but at the head of
 * the latest user message, drops the unprotected unit before the run too (the
 * run then starts after a message that can take the marker, if there is one).
 */
function extendBack(
  units: readonly ContextUnit[],
  unit: ContextUnit,
  work: Work,
  messages: readonly ChatMessage[],
): void {
  while (!markerFitsBefore(unit, work, messages)) {
    let start = unit.start;
    while (start > 0 && work.dropped.has(start - 1)) start -= 1;
    const before = units.find((u) => u.start <= start - 1 && start - 1 < u.end);
    if (!before || before.protected) return;
    dropUnit(before, work);
  }
}

const MARKER_TOKENS_ESTIMATE = 60;

function markerEstimate(work: Work): number {
  return spansOf([...work.dropped]).length * MARKER_TOKENS_ESTIMATE;
}

function markerFor(
  work: Work,
  originals: readonly ChatMessage[],
  span: DroppedSpan,
): ReturnType<typeof dropMarker> {
  const key = `${span.start}:${span.end}`;
  let marker = work.markers.get(key);
  if (!marker) {
    marker = dropMarker(originals, span, work.prefixKey);
    work.markers.set(key, marker);
  }
  return marker;
}

function withMarkers(work: Work, originals: readonly ChatMessage[]): number {
  let total = work.total;
  for (const span of spansOf([...work.dropped]))
    total += work.countOne(markerFor(work, originals, span).message);
  return total;
}

function applyDecision(decision: CutDecision, work: Work, deps: FitDeps): void {
  for (const [index, level] of decision.harder) {
    if (index < work.current.length) applyHarder(index, level, work, deps);
  }
  for (const span of decision.dropped) {
    for (let i = span.start; i < span.end && i < work.current.length; i += 1) {
      if (work.dropped.has(i)) continue;
      work.dropped.add(i);
      work.total -= work.counts[i]!;
    }
  }
}

function transformsOf(mode: Mode, work: Work, reused: boolean): string[] {
  const out: string[] = [];
  if (work.harder.size > 0)
    out.push(`context:compress_harder:${work.harder.size}`, ...new Set(work.harderTransforms));
  if (work.dropped.size > 0) out.push(`context:drop:${mode}:${work.dropped.size}`);
  if (reused) out.push('context:reused_cut');
  return out;
}

function finish(
  messages: readonly ChatMessage[],
  originals: readonly ChatMessage[],
  work: Work,
  budget: number | undefined,
  transforms: string[],
  chain?: MemoChain,
): FitResult {
  const spans = spansOf([...work.dropped]);
  const out: ChatMessage[] = [];
  const origin: number[] = [];
  const spanAt = new Map(spans.map((s) => [s.start, s]));
  let markerTokens = 0;
  const hosts = new Set<number>();
  for (let i = 0; i < messages.length; i += 1) {
    const span = spanAt.get(i);
    if (span) {
      const marker = markerFor(work, originals, span);
      work.ccrEntries.set(marker.hash, marker.original);
      const host = out.length - 1;
      if (hostsMarker(messages, span, origin[host])) {
        // appended to the tool output before the run: no user message of svc's after it
        const before = out[host]!;
        out[host] = appendText(before, contentText(marker.message.content));
        markerTokens += work.countOne(out[host]!) - work.countOne(before);
        hosts.add(origin[host]!);
      } else {
        markerTokens += work.countOne(marker.message);
        out.push(marker.message);
        origin.push(-1);
      }
      for (let k = span.start; k < span.end; k += 1)
        observe(originals, k, 'dropped', [marker.hash], work, k - span.start);
    }
    if (work.dropped.has(i)) continue;
    out.push(work.current[i]!);
    origin.push(i);
    if (work.harder.has(i)) observe(originals, i, 'compressed', harderHashesOf(work.current[i]!), work);
  }
  if (chain && (spans.length > 0 || work.harder.size > 0)) {
    storeDecision(chain.memo, chain.key, chain.seed, {
      covers: messages.length,
      dropped: spans,
      harder: [...work.harder],
    });
  }
  const tokens = work.total + markerTokens;
  const overflow = budget !== undefined && spans.length + work.harder.size > 0 ? tokens - budget : 0;
  return {
    messages: out,
    messageOrigin: origin,
    changed: new Set([...work.harder.keys(), ...hosts]),
    ccrEntries: work.ccrEntries,
    transforms: overflow > 0 ? [...transforms, `context:overflow:${overflow}`] : transforms,
    observations: work.observations,
    dropped: [...work.dropped].sort((a, b) => a - b),
    tokens,
    budget,
  };
}

/**
 * Where a dropped run's marker goes: appended to the tool output right before
 * the run when the run holds no user message (agent work only) and that
 * output has text (`markerHost`); otherwise it is a user message of its own.
 * Decided from the run and the message before it only, so a cut applied
 * again on later turns places its markers the same way (principle 2); after
 * the latest user message every run qualifies (`buildUnits` protects the
 * rest), so the latest user message stays the last one the model sees.
 */
function hostsMarker(
  messages: readonly ChatMessage[],
  span: DroppedSpan,
  before: number | undefined,
): boolean {
  if (before === undefined || before !== span.start - 1 || !markerHost(messages, before)) return false;
  for (let k = span.start; k < span.end; k += 1) if (messages[k]!.role === 'user') return false;
  return true;
}

/** `message` with `text` appended to its last text (string content or last text part). */
function appendText(message: ChatMessage, text: string): ChatMessage {
  const last = textUnits(message).at(-1);
  if (!last) return message;
  return withTexts(message, new Map([[last.part, `${last.text}\n\n${text}`]]));
}

function harderHashes(message: ChatMessage): Set<string> {
  const text = typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
  return new Set([...text.matchAll(/svc_retrieve hash=([0-9a-f]{24})/g)].map((m) => m[1]!));
}

/**
 * Observations by the CCR hashes (plus offset) that already identify the
 * content: no re-hashing on later turns, and the same object each turn
 * (which TOIN's stores recognise and count once).
 */
const observationMemo = lruOfEntries<string, ShapeObservation | false>(50_000);

function observe(
  originals: readonly ChatMessage[],
  index: number,
  event: ShapeObservation['event'],
  hashes: string[],
  work: Work,
  offset = 0,
): void {
  const key = hashes.length === 0 ? undefined : `${event}:${hashes.join(',')}:${offset}`;
  let observation = key === undefined ? undefined : observationMemo.get(key);
  if (observation === undefined) {
    const shape = messageShape(originals, index);
    observation = shape ? { event, shape: shape.key, tool: shape.tool, fields: shape.fields, hashes } : false;
    if (key !== undefined) observationMemo.set(key, observation);
  }
  if (observation) work.observations.push(observation);
}

/** The CCR hashes of a message compressed harder, by the message object (the same each turn). */
const harderHashesAt = new WeakMap<ChatMessage, string[]>();

function harderHashesOf(message: ChatMessage): string[] {
  let hashes = harderHashesAt.get(message);
  if (!hashes) {
    hashes = [...harderHashes(message)];
    harderHashesAt.set(message, hashes);
  }
  return hashes;
}
