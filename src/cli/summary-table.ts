import { type FitColumn, fitTable, hiddenNote } from '../ui/fit-table.js';

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
  const columns: FitColumn[] = [
    { head: 'input', wrap: true },
    { head: 'format', drop: 1 },
    { head: 'model', wrap: true },
    { head: 'before', right: true },
    { head: 'after', right: true },
    { head: 'saved', right: true },
    { head: 'ratio', right: true },
    { head: 'transforms', wrap: true },
  ];
  const cells = (r: SummaryRow) => [
    r.label,
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
    const label = `total: ${rows.length} file${rows.length === 1 ? '' : 's'}${options.failed ? `, ${options.failed} failed` : ''}`;
    body.push([
      label,
      '',
      '',
      int(before),
      int(after),
      `${int(saved)} (${pct(saved, before)})`,
      ratio(after, before),
      summarizeTransforms(rows.flatMap((r) => r.transforms)),
    ]);
  }
  const { text, hidden } = fitTable(columns, body, {
    stream: process.stderr,
    ...(options.width === undefined ? {} : { width: options.width }),
  });
  const notes = rows.some((r) => !r.exact)
    ? '\n(est.): estimated token counts: no public tokenizer for this model'
    : '';
  return `${text}${notes}\n${hiddenNote(hidden, 'every field is in the JSON')}`;
}
