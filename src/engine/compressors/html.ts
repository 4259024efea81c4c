import { formatMarker } from '../markers.js';
import { collapseRepeats, tidyLines } from './lines.js';
import type { CompressContext, Compressed } from './types.js';

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
const BLOCK_RE =
  /<\/?(?:p|div|br|li|ul|ol|tr|table|h[1-6]|section|article|header|footer|pre|blockquote|title)\b[^>]*>/gi;

/**
 * HTML: strips markup (scripts, styles, comments, tags) and keeps the text
 * with its line structure; links keep their address. Every word of the text
 * stays; the original page goes to the CCR store.
 */
export function compressHtml(text: string, ctx: CompressContext): Compressed {
  const stripped = text
    .replace(/<(script|style|noscript|svg)\b[^>]{0,2000}>[\s\S]{0,500000}?<\/\1>/gi, '')
    .replace(/<!--[\s\S]{0,100000}?-->/g, '')
    .replace(/<a\b[^>]{0,2000}?href="([^"]{0,2000})"[^>]{0,2000}>([^<]{0,2000})<\/a>/gi, '$2 ($1)')
    .replace(BLOCK_RE, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&(#\d+|#x[0-9a-f]+|[a-z]+);/gi, (m, e: string) => {
      if (e[0] === '#')
        return String.fromCodePoint(
          e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1)),
        );
      return ENTITIES[e.toLowerCase()] ?? m;
    });
  const lines = collapseRepeats(tidyLines(stripped.split('\n').map((l) => l.replace(/[ \t]+/g, ' ').trim())));
  const body = lines.join('\n').trim();
  const marker = formatMarker({
    hash: ctx.hash,
    omitted: text.length - body.length,
    unit: 'chars',
    note: 'HTML markup',
  });
  return { text: `${body}\n${marker}`, lossy: true };
}
