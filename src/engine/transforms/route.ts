import { compressHtml } from '../compressors/html.js';
import {
  COMPRESSORS,
  type CompressContext,
  type Compressed,
  type ContentType,
} from '../compressors/index.js';
import { parseJsonContent } from '../compressors/json-parse.js';
import { renderCompact } from '../compressors/json-render.js';
import { compressProse } from '../compressors/prose.js';
import { compressRead } from '../compressors/read.js';
import { messageShape } from '../context/shape.js';
import { contentHash } from '../hash.js';
import { isCompressible, textUnits, withTexts } from '../messages.js';
import {
  markDone,
  type PipelineEnv,
  type PipelineState,
  type TokenPair,
  type Transform,
} from '../pipeline.js';
import { detectContentType, isNumberedText, type ToolKind, toolKind } from '../router.js';
import { ENGINE_VERSION, MIN_SAVED_TOKENS, MIN_SAVINGS_RATIO, SMALL_OUTPUT_TOKENS } from '../settings.js';
import type { ChatMessage, Tokenizer, ToolCall } from '../types.js';

interface UnitResult {
  type: ContentType;
  /** Compressed text, or null when the original stays. */
  text: string | null;
  lossy: boolean;
}

/**
 * A unit's result as the memo keeps it: its type, then `1` (lossy), `0`
 * (lossless) or `-` (the original stays), then the text, separated by NUL
 * (no type holds one). Not JSON: writing a compressed read or log as a JSON
 * string scanned and copied it for its escapes (with the memo's write, 1.04
 * against 0.17 ms per 91k tokens of Claude Code tool outputs; issue 19).
 */
function encodeResult(r: UnitResult): string {
  return r.text === null ? `${r.type}\u0000-` : `${r.type}\u0000${r.lossy ? '1' : '0'}\u0000${r.text}`;
}

/** `encodeResult` read back; undefined for anything else (a memo written in another form is not trusted). */
function decodeResult(kept: string): UnitResult | undefined {
  const cut = kept.indexOf('\u0000');
  if (cut <= 0) return undefined;
  const type = kept.slice(0, cut) as ContentType;
  if (!Object.hasOwn(COMPRESSORS, type)) return undefined;
  const flag = kept[cut + 1];
  if (flag === '-' && kept.length === cut + 2) return { type, text: null, lossy: false };
  if ((flag !== '1' && flag !== '0') || kept[cut + 2] !== '\u0000') return undefined;
  return { type, text: kept.slice(cut + 3), lossy: flag === '1' };
}

/** What routing did to one message: its output and what to record for it. */
interface Routed {
  /** Prefix key of the message (the memo key of everything computed from it). */
  prefix: string;
  encoding: string;
  /** The message as routed (the input itself when nothing changed). */
  out: ChatMessage;
  parts: number[];
  /**
   * `[type, [text before, text after]]` per compressed text: counted when the
   * stats are read, and the counts kept here for the turns that replay it.
   */
  records: Array<[ContentType, TokenPair]>;
  /** CCR entries `[hash, original]` of its lossy markers. */
  ccr: Array<[string, string]>;
}

/**
 * TOIN's keep factor for tool output `i` (by its shape): above 1 for shapes
 * the model often retrieves, below 1 for shapes it never does, else 1. Read
 * when a text is first compressed; the memo then keeps that result, so what
 * TOIN learns later never changes a message already sent (principle 2).
 */
function keepFactor(env: PipelineEnv, i: number): number {
  const shapes = env.toin?.shapes;
  if (!shapes || Object.keys(shapes).length === 0) return 1;
  const shape = messageShape(env.input, i);
  return (shape && shapes[shape.key]?.keepFactor) || 1;
}

function replay(state: PipelineState, i: number, outcome: Routed): void {
  for (const [hash, original] of outcome.ccr) state.ccrEntries.set(hash, original);
  for (const part of outcome.parts) markDone(state, i, part);
  for (const [type, pair] of outcome.records) state.log.recordPair('router', type, pair);
  if (outcome.out !== state.messages[i]) state.messages[i] = outcome.out;
}

/** True when a compressed form saves enough to be worth using. */
export function worthIt(before: number, after: number): boolean {
  return before - after >= Math.max(MIN_SAVED_TOKENS, before * MIN_SAVINGS_RATIO);
}

/**
 * `worthIt` of the two texts' pre-tokens (`Tokenizer.preTokens`), or of
 * their counts for a tokenizer without them. Pre-tokens measure a text's
 * size for this decision as well as its count does (the same answer for all
 * but 2 of the 2,840 candidates of the eval cases and generated sessions,
 * both a hair under 10%) at about twice the speed, and depend on the text
 * alone, so the decision does too (principle 2). The exact counts are left
 * for the stats, read after the request is forwarded (issue 19).
 */
function worthItFor(before: string, after: string, tokenizer: Tokenizer): boolean {
  const size = tokenizer.preTokens;
  if (!size) return worthItCounted(before, after, tokenizer);
  // worthIt also holds for a smaller `after`: an upper bound of the compressed text's pre-tokens
  // (its UTF-8 bytes) settles it without finding them when the original has that many; a lossy
  // selection of a long output (a few percent of it kept) is usually settled so. The text was just
  // made: not looked up among the counts (the bound settles no differently from the fallback below,
  // which it implies), so its first hashing is left to the stats' counts, after forwarding.
  const high = tokenizer.atMost?.(after, false);
  if (high !== undefined) {
    const enough = enoughFor(high);
    if (enough <= before.length / PLAUSIBLE_CHARS_PER_TOKEN && size(before, enough) >= enough) return true;
  }
  const afterSize = size(after);
  return worthIt(size(before, enoughFor(afterSize)), afterSize);
}

/**
 * `worthIt` of the two texts' token counts, counting the original only when
 * a lower bound of its count does not settle it: `worthIt` grows with
 * `before`, so if it holds for a lower bound it holds for the count. The
 * same decision as counting both.
 */
function worthItCounted(before: string, after: string, tokenizer: Tokenizer): boolean {
  const afterTokens = tokenizer.countText(after);
  const low = tokenizer.atLeast?.(before, enoughFor(afterTokens));
  if (low !== undefined && worthIt(low, afterTokens)) return true;
  return worthIt(tokenizer.countText(before), afterTokens);
}

/**
 * The size of an original from which `worthIt(size, after)` holds: from
 * max(after + MIN_SAVED_TOKENS, after / (1 - MIN_SAVINGS_RATIO)) on (one more
 * for rounding), so a count of the original may stop there.
 */
function enoughFor(after: number): number {
  return Math.ceil(Math.max(after + MIN_SAVED_TOKENS, after / (1 - MIN_SAVINGS_RATIO))) + 1;
}

/**
 * The byte bound is tried only when the original may well have that many
 * pre-tokens (text averages 3-4 characters a token): otherwise finding its
 * pre-tokens to the end would be spent for nothing.
 */
const PLAUSIBLE_CHARS_PER_TOKEN = 4;

/** True when `text` has at least `SMALL_OUTPUT_TOKENS` tokens, counted only when its lower bound has fewer. */
function bigEnough(text: string, tokenizer: Tokenizer): boolean {
  if (text.length < SMALL_OUTPUT_TOKENS) return false;
  if ((tokenizer.atLeast?.(text, SMALL_OUTPUT_TOKENS) ?? 0) >= SMALL_OUTPUT_TOKENS) return true;
  return tokenizer.countText(text) >= SMALL_OUTPUT_TOKENS;
}

/** How the router compresses: `lossy` (the default) or `lossless` (`--lossless`). */
export type RouteMode = 'lossy' | 'lossless';

/**
 * `--lossless`: reversible steps only, and nothing that needs the CCR store.
 * JSON documents are minified (uniform records in columnar form); every
 * other text goes through `compressRead` without references to earlier
 * messages (numbers thinned, whitespace, repeats).
 */
function compressLossless(text: string, ctx: CompressContext): { type: ContentType; res: Compressed | null } {
  const parsed = parseJsonContent(text);
  if (parsed)
    return { type: 'json', res: { text: parsed.preamble + renderCompact(parsed.value), lossy: false } };
  return { type: detectContentType(text), res: compressRead(text, ctx, true) };
}

/**
 * By what the tool call did (`toolKind`): reads and listings stay lossless
 * (`compressRead`), fetched pages and subagent reports keep every word (HTML
 * loses its markup, other pages only whitespace and passages shown earlier);
 * anything else goes to the compressor of its content type, except that
 * unnumbered code printed by some other command is selected as structured
 * text (a numbered listing is a read whatever the tool).
 */
function compressByKind(
  text: string,
  kind: ToolKind | undefined,
  ctx: CompressContext,
): { type: ContentType; res: Compressed | null } {
  const type = detectContentType(text);
  const numbered = isNumberedText(text);
  if (kind === 'read' || kind === 'list' || numbered) return { type, res: compressRead(text, ctx) };
  if (kind === 'doc')
    return { type, res: type === 'html' ? compressHtml(text, ctx) : compressProse(text, ctx) };
  // code-like output of a command that is not a read (test runs, hooks, builds): its result is at
  // the end and in new names, not in definitions, so it gets the line selection of structured text
  if (type === 'code') return { type, res: COMPRESSORS.text(text, ctx) };
  return { type, res: COMPRESSORS[type](text, ctx) };
}

function compressUnit(
  text: string,
  ctx: CompressContext,
  tokenizer: Tokenizer,
  kind: ToolKind | undefined,
  mode: RouteMode,
): UnitResult {
  const { type, res } = mode === 'lossless' ? compressLossless(text, ctx) : compressByKind(text, kind, ctx);
  if (!res || !worthItFor(text, res.text, tokenizer)) return { type, text: null, lossy: false };
  return { type, text: res.text, lossy: res.lossy };
}

/** The tool call each tool message answers, by call id, with the index of the message that made it. */
function callsById(input: readonly ChatMessage[]): Map<string, { at: number; call: ToolCall }> {
  const calls = new Map<string, { at: number; call: ToolCall }>();
  for (let at = 0; at < input.length; at++)
    for (const call of input[at]!.tool_calls ?? [])
      if (call.id && !calls.has(call.id)) calls.set(call.id, { at, call });
  return calls;
}

/** What the call behind tool message `i` did; only a call made before it counts (principle 2). */
function kindOf(
  msg: ChatMessage,
  i: number,
  calls: () => Map<string, { at: number; call: ToolCall }>,
): ToolKind | undefined {
  if (msg.role !== 'tool' || !msg.tool_call_id) return undefined;
  const found = calls().get(msg.tool_call_id);
  if (!found || found.at >= i) return undefined;
  return toolKind(found.call.function?.name ?? '', found.call.function?.arguments ?? '');
}

/**
 * The content router: each compressible text of at least
 * `SMALL_OUTPUT_TOKENS` goes to the compressor of its content type; the
 * result is used only when `worthIt`. Results are memoized per message prefix
 * (the only thing they depend on), so a conversation re-sent on each turn is
 * compressed once per new message.
 */
export function createRouteTransform(mode: RouteMode): Transform {
  /**
   * Outcomes by input message object: the proxy passes the same objects for
   * the part of a conversation it has already seen, so each of those costs a
   * lookup, and yields the same output object (whose counts are then memoized
   * too) instead of re-walking its texts (principle 4). Only with a memo (the
   * proxy), whose messages are never modified; validated by prefix key.
   */
  const routedAt = new WeakMap<ChatMessage, Routed>();
  return {
    name: 'router',
    run(state: PipelineState, env: PipelineEnv): void {
      const { tokenizer, history, memo } = env;
      let calls: Map<string, { at: number; call: ToolCall }> | undefined;
      const lazyCalls = () => (calls ??= callsById(env.input));
      // a loop, not a callback made per request: see json-walk.ts on closures and optimized code
      for (let i = 0; i < env.input.length; i++) {
        const msg = env.input[i]!;
        if (!isCompressible(msg)) continue;
        // Untouched by earlier transforms and routed before after the same prefix: the same outcome.
        const fresh = memo !== undefined && state.messages[i] === msg && !state.done.has(i);
        if (fresh) {
          const known = routedAt.get(msg);
          if (known && known.encoding === tokenizer.encoding && known.prefix === history.prefixKey(i)) {
            replay(state, i, known);
            continue;
          }
        }
        const outcome: Routed = {
          prefix: '',
          encoding: tokenizer.encoding,
          out: state.messages[i]!,
          parts: [],
          records: [],
          ccr: [],
        };
        const replaced = new Map<number, string>();
        let capScale: number | undefined;
        for (const unit of textUnits(msg)) {
          if (state.done.get(i)?.has(unit.part)) continue;
          if (!bigEnough(unit.text, tokenizer)) continue;
          const key = memo
            ? `svc-router:${ENGINE_VERSION}:${mode}:${tokenizer.encoding}:${history.prefixKey(i)}:${unit.part}`
            : '';
          let result: UnitResult | undefined;
          const cached = memo?.get(key);
          if (cached !== undefined) result = decodeResult(cached);
          const hash = contentHash(unit.text);
          if (!result) {
            env.deadline?.check('router');
            capScale ??= keepFactor(env, i);
            const ctx: CompressContext = {
              hash,
              userTerms: history.userTermsBefore(i),
              seen: history.seenBefore(i),
              earlierJson: () => history.jsonSubtreesBefore(i),
              earlierEntities: () => history.jsonEntitiesBefore(i),
              earlierLinkShapes: () => history.jsonLinkShapesBefore(i),
              earlierLines: () => history.linesBefore(i),
              firstSight: true,
              ...(capScale !== 1 ? { capScale } : {}),
            };
            result = compressUnit(unit.text, ctx, tokenizer, kindOf(msg, i, lazyCalls), mode);
            memo?.set(key, encodeResult(result));
          }
          if (result.text === null) continue;
          replaced.set(unit.part, result.text);
          if (result.lossy) outcome.ccr.push([hash, unit.text]);
          outcome.parts.push(unit.part);
          outcome.records.push([result.type, [unit.text, result.text]]);
        }
        if (replaced.size > 0) outcome.out = withTexts(state.messages[i]!, replaced);
        if (fresh) {
          outcome.prefix = history.prefixKey(i);
          routedAt.set(msg, outcome);
        }
        replay(state, i, outcome);
      }
    },
  };
}

/** The content router (lossy where it pays, see `createRouteTransform`). */
export const routeTransform: Transform = createRouteTransform('lossy');

/** The content router of `--lossless`: reversible steps only, no markers, no CCR entries. */
export const losslessRouteTransform: Transform = createRouteTransform('lossless');
