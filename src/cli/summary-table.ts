import { type FitColumn, fitTable, hiddenNote } from '../ui/fit-table.js';
import { outputWidth } from '../ui/term.js';

/** The longest folder prefix (ending in "/") that every path shares, or ''. */
function commonDir(paths: readonly string[]): string {
  if (paths.length < 2) return '';
  let prefix = paths[0] ?? '';
  for (const p of paths) while (!p.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return prefix.slice(0, prefix.lastIndexOf('/') + 1);
}

/** One line of the `--summary` table. */
export interface SummaryRow {
  label: string;
  format: string;
  model: string;
  before: number;
  after: number;
  saved: number;
  transforms: string[];
  /** False when the counts are estimates (Claude and unknown models). */
  exact: boolean;
}

const int = (n: number) => n.toLocaleString('en-US');
const pct = (saved: number, before: number) =>
  before > 0 ? `${((100 * saved) / before).toFixed(1)}%` : 'n/a';
const ratio = (after: number, before: number) => (before > 0 ? (after / before).toFixed(3) : 'n/a');

/**
 * `router:json:0.18`, `router:json:0.40`, `logs:collapse` ->
 * `router:json x2, logs:collapse`: entries grouped by their first two fields.
 */
export function summarizeTransforms(transforms: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const t of transforms) {
    const key = t.split(':').slice(0, 2).join(':');
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  if (counts.size === 0) return '-';
  return [...counts].map(([key, n]) => (n > 1 ? `${key} x${n}` : key)).join(', ');
}

/** Savings over several results, as a percentage of the tokens before (0 when nothing was counted). */
export function totalSavingsPercent(rows: readonly SummaryRow[]): number {
  const before = rows.reduce((s, r) => s + r.before, 0);
  const saved = rows.reduce((s, r) => s + r.saved, 0);
  return before > 0 ? (100 * saved) / before : 0;
}

/** The cli-table3 table of `svc compress --summary`; with several inputs, one row each plus a total. */
export function renderSummary(
  rows: readonly SummaryRow[],
  options: { many: boolean; failed: number; width?: number },
): string {
  // Fits the width of stderr (80 columns in a pipe): the input names and transforms wrap,
  // the format column goes first when even that is not enough (it is in the JSON).
  const totalLabel = `total: ${rows.length} file${rows.length === 1 ? '' : 's'}${options.failed ? `, ${options.failed} failed` : ''}`;
  const columns: FitColumn[] = [
    { head: 'input', wrap: true, min: options.many ? totalLabel.length : 0 },
    { head: 'format', drop: 1 },
    { head: 'model', wrap: true },
    { head: 'before', right: true },
    { head: 'after', right: true, drop: 2 },
    { head: 'saved', right: true },
    { head: 'ratio', right: true, drop: 3 },
    { head: 'transforms', wrap: true, breakAt: ', ' },
  ];
  // Several files from one folder: the folder once, under the table; each row names its file.
  const dir = options.many ? commonDir(rows.map((r) => r.label)) : '';
  const cells = (r: SummaryRow) => [
    r.label.slice(dir.length),
    r.format,
    r.exact ? r.model : `${r.model} (est.)`,
    int(r.before),
    int(r.after),
    `${int(r.saved)} (${pct(r.saved, r.before)})`,
    ratio(r.after, r.before),
    summarizeTransforms(r.transforms),
  ];
  const body = rows.map(cells);
  if (options.many) {
    const before = rows.reduce((s, r) => s + r.before, 0);
    const after = rows.reduce((s, r) => s + r.after, 0);
    const saved = rows.reduce((s, r) => s + r.saved, 0);
    body.push([
      totalLabel,
      '',
      '',
      int(before),
      int(after),
      `${int(saved)} (${pct(saved, before)})`,
      ratio(after, before),
      summarizeTransforms(rows.flatMap((r) => r.transforms)),
    ]);
  }
  for (const row of body) row[7] = (row[7] ?? '').replace(/(^|, )router:/g, '$1');
  const width = options.width ?? outputWidth(process.stderr);
  const { text, hidden } = fitTable(columns, body, { stream: process.stderr, width });
  const notes = rows.some((r) => !r.exact)
    ? '\n(est.): estimated token counts: no public tokenizer for this model'
    : '';
  const where = dir ? `\ninputs in ${dir}` : '';
  return `${text}${where}${notes}\n${hiddenNote(hidden, 'every field is in the JSON', width)}`;
}
