import Table from 'cli-table3';
import { outputWidth, tableStyle } from './term.js';

type Stream = { isTTY?: boolean; columns?: number };

/** One column of a table that must fit a width. */
export interface FitColumn {
  head: string;
  /**
   * When the table is too wide, columns with a `drop` rank are left out,
   * lowest rank first; columns without one always stay.
   */
  drop?: number;
  /** Text that may wrap onto several lines (names, lists) when the table is still too wide. */
  wrap?: boolean;
  /** Right-align (numbers). */
  right?: boolean;
  /** Width (characters of text) a wrapping column keeps at least. */
  min?: number;
  /** Where a wrapping cell may break (default a space): `', '` keeps list items such as `json x3` whole. */
  breakAt?: string;
}

export interface FitOptions {
  /** Total width in columns (default: `outputWidth(stream)`). */
  width?: number;
  /** The stream the table goes to: decides colour and default width (default stdout). */
  stream?: Stream;
}

export interface FittedTable {
  text: string;
  /** The width the table was fitted to. */
  width: number;
  /** Headings of the columns left out to fit the width. */
  hidden: string[];
}

const PAD = 2; // cli-table3: one space each side of a cell

/**
 * Breaks `text` into lines of at most `width` characters, at `breakAt` (a
 * space by default) when it can; the separator's trailing spaces go at the line end.
 */
export function wrapText(text: string, width: number, breakAt = ' '): string {
  const out: string[] = [];
  const joint = breakAt.trimEnd();
  const gap = breakAt.slice(joint.length);
  for (const paragraph of text.split('\n')) {
    let line = '';
    const words = paragraph.split(breakAt).map((w, i, all) => (i < all.length - 1 ? w + joint : w));
    for (const word of words) {
      let w = word;
      if (line.length > 0 && line.length + gap.length + w.length <= width) {
        line += `${gap}${w}`;
        continue;
      }
      if (line.length > 0) out.push(line);
      while (w.length > width) {
        out.push(w.slice(0, width));
        w = w.slice(width);
      }
      line = w;
    }
    out.push(line);
  }
  return out.join('\n');
}

const cellWidth = (s: string) => Math.max(...s.split('\n').map((l) => l.length));

/**
 * A cli-table3 table that fits `width` columns: it first leaves out the
 * columns with a `drop` rank (lowest first), then wraps the `wrap` columns.
 * The caller says which columns were hidden (the full data is in --json / csv).
 */
export function fitTable(columns: FitColumn[], rows: string[][], options: FitOptions = {}): FittedTable {
  const stream = options.stream ?? process.stdout;
  const width = options.width ?? outputWidth(stream);
  let keep = columns.map((_, i) => i);
  const natural = columns.map(
    (c, i) => Math.max(c.head.length, ...rows.map((r) => cellWidth(r[i] ?? ''))) + PAD,
  );
  const total = (idx: number[], w: number[]) => idx.reduce((s, i) => s + (w[i] ?? 0), 0) + idx.length + 1;
  const droppable = columns
    .map((c, i) => ({ i, rank: c.drop }))
    .filter((c): c is { i: number; rank: number } => c.rank !== undefined)
    .sort((a, b) => a.rank - b.rank);
  const hidden: string[] = [];
  // A wrapping column can shrink to its longest word (at most 24) without breaking words.
  const longestWord = (i: number) =>
    Math.max(
      0,
      ...rows.flatMap((r) =>
        (r[i] ?? '').split(columns[i]?.breakAt ?? /\s+/).map((w) => w.length + (columns[i]?.breakAt ? 1 : 0)),
      ),
    );
  const headFloor = (i: number) => Math.max(8, columns[i]?.head.length ?? 0, columns[i]?.min ?? 0) + PAD;
  const wordFloor = (i: number) => Math.max(headFloor(i), Math.min(24, longestWord(i)) + PAD);
  for (const d of droppable) {
    if (total(keep, natural) <= width) break;
    // Drop only when wrapping the remaining columns could not make the table fit anyway.
    const wrapMin = keep.map((i) =>
      columns[i]?.wrap ? Math.min(natural[i] ?? 0, wordFloor(i)) : (natural[i] ?? 0),
    );
    if (total(keep, wrapMin) <= width) break;
    keep = keep.filter((i) => i !== d.i);
    hidden.push(columns[d.i]?.head ?? '');
  }
  const widths = keep.map((i) => natural[i] ?? 0);
  let over = total(keep, natural) - width;
  if (over > 0) {
    // Shrink wrapping columns, widest first: first down to their longest word (so words stay
    // whole), then down to their heading or 8 characters.
    const wrapping = keep.map((i, k) => ({ i, k })).filter(({ i }) => columns[i]?.wrap);
    for (const floor of [wordFloor, headFloor]) {
      while (over > 0) {
        let widest: { k: number; w: number } | undefined;
        for (const { i, k } of wrapping) {
          const w = widths[k] ?? 0;
          if (w > floor(i) && w > (widest?.w ?? 0)) widest = { k, w };
        }
        if (!widest) break;
        widths[widest.k] = widest.w - 1;
        over--;
      }
    }
  }
  const table = new Table({
    head: keep.map((i) => columns[i]?.head ?? ''),
    colWidths: widths,
    colAligns: keep.map((i) => (columns[i]?.right ? 'right' : 'left')),
    style: tableStyle(stream),
  });
  for (const r of rows) {
    table.push(
      keep.map((i, k) =>
        columns[i]?.wrap ? wrapText(r[i] ?? '', (widths[k] ?? 0) - PAD, columns[i]?.breakAt) : (r[i] ?? ''),
      ),
    );
  }
  return { text: table.toString(), hidden, width };
}

/** The note under a table that left columns out, or '' when none were. */
export function hiddenNote(hidden: string[], fullData: string, width = outputWidth()): string {
  if (hidden.length === 0) return '';
  return `${wrapText(`(${hidden.join(', ')} left out to fit the width; ${fullData})`, width)}\n`;
}
