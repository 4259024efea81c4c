import { formatMarker } from '../markers.js';
import { collapseRepeats, tidyLines } from './lines.js';
import type { CompressContext, Compressed } from './types.js';

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
const BLOCK_RE =
  /<\/?(?:p|div|br|li|ul|ol|tr|table|h[1-6]|section|article|header|footer|pre|blockquote|title)\b[^<>]*>/gi;
/** What `/[ \t]+/g` replaces by one space, except a space alone. */
const BLANK_RUN_RE = /[ \t]{2,}|\t/g;
/** Elements whose content is no text, and comments: dropped whole. */
const SKIPPED_OPEN_RE = /<(script|style|noscript|svg)\b[^<>]{0,2000}>|<!--/gi;
/** The end of each skipped element, by its name in lower case (`--` for a comment). */
const SKIPPED_CLOSE_RE: Record<string, RegExp> = {
  script: /<\/script>/gi,
  style: /<\/style>/gi,
  noscript: /<\/noscript>/gi,
  svg: /<\/svg>/gi,
  '--': /-->/g,
};

/**
 * `text` without its script, style, noscript and svg elements and its
 * comments. The closing tag is searched once per opening tag, and a name
 * whose closing tag is missing is not searched again: a lazy `[\s\S]*?`
 * rescanned the rest of the text from every unclosed opening tag.
 */
function stripSkipped(text: string): string {
  let out = '';
  let from = 0;
  const unclosed = new Set<string>();
  const open = SKIPPED_OPEN_RE;
  open.lastIndex = 0;
  for (let m = open.exec(text); m !== null; m = open.exec(text)) {
    const name = m[1]?.toLowerCase();
    const closeRe = SKIPPED_CLOSE_RE[name ?? '--']!;
    if (unclosed.has(name ?? '--')) continue;
    closeRe.lastIndex = open.lastIndex;
    const close = closeRe.exec(text);
    if (!close) {
      unclosed.add(name ?? '--');
      continue;
    }
    out += text.slice(from, m.index);
    from = closeRe.lastIndex;
    open.lastIndex = from;
  }
  return out + text.slice(from);
}

/**
 * `text` without its tags (what `/<[^>]+>/g` removes). A scan with
 * `indexOf`: the regex rescanned to the end of the text from every `<` that
 * has no `>` after it (quadratic).
 */
function stripTags(text: string): string {
  let out = '';
  let from = 0;
  for (let open = text.indexOf('<'); open >= 0; open = text.indexOf('<', open + 1)) {
    const close = text.indexOf('>', open + 1);
    if (close < 0) break;
    if (close === open + 1) continue;
    out += text.slice(from, open);
    from = close + 1;
    open = close;
  }
  return out + text.slice(from);
}

/** A link with its address: shown as `text (address)`. */
const LINK_RE = /<a\b[^<>]{0,2000}?href="([^"]{0,2000})"[^<>]{0,2000}>([^<]{0,2000})<\/a>/gi;
const ENTITY_RE = /&(#\d+|#x[0-9a-f]+|[a-z]+);/gi;

/** A line without its blanks at either end (a module function, not a closure made per call: see json-walk.ts). */
function trimmed(l: string): string {
  return l.trim();
}

/** The character an entity (`&amp;`, `&#39;`, `&#x27;`) stands for; unknown names stay as they are. */
function decodeEntity(m: string, e: string): string {
  if (e[0] === '#')
    return String.fromCodePoint(
      e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1)),
    );
  return ENTITIES[e.toLowerCase()] ?? m;
}

/**
 * HTML: strips markup (scripts, styles, comments, tags) and keeps the text
 * with its line structure; links keep their address. Every word of the text
 * stays; the original page goes to the CCR store.
 */
export function compressHtml(text: string, ctx: CompressContext): Compressed {
  const stripped = stripSkipped(text).replace(LINK_RE, '$2 ($1)').replace(BLOCK_RE, '\n');
  const tagless = stripTags(stripped);
  const decoded = tagless.includes('&') ? tagless.replace(ENTITY_RE, decodeEntity) : tagless;
  // runs of blanks become one space (runs never span lines; a single space stays as it is)
  const spaced = decoded.replace(BLANK_RUN_RE, ' ');
  const lines = collapseRepeats(tidyLines(spaced.split('\n').map(trimmed)));
  const body = lines.join('\n').trim();
  const marker = formatMarker({
    hash: ctx.hash,
    omitted: text.length - body.length,
    unit: 'chars',
    note: 'HTML markup',
  });
  return { text: `${body}\n${marker}`, lossy: true };
}
