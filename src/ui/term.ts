/**
 * Terminal conventions shared by every command: colour only on a terminal and
 * never with NO_COLOR (https://no-color.org); tables as wide as the terminal,
 * 80 columns when the output is a pipe or a file.
 */

type Stream = { isTTY?: boolean; columns?: number };

/** True when `stream` may carry colour codes: a terminal, NO_COLOR unset, TERM not "dumb". */
export function colorAllowed(
  stream: Stream = process.stdout,
  env: Record<string, string | undefined> = process.env,
): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

/** Columns available for a table: `COLUMNS` when set, the terminal's width, else 80. */
export function outputWidth(
  stream: Stream = process.stdout,
  env: Record<string, string | undefined> = process.env,
): number {
  const fromEnv = Number(env.COLUMNS);
  if (Number.isInteger(fromEnv) && fromEnv >= 20) return fromEnv;
  if (stream.isTTY && stream.columns && stream.columns >= 20) return stream.columns;
  return 80;
}

/** cli-table3 style: coloured heading and border only when colour is allowed. */
export function tableStyle(stream: Stream = process.stdout): { head: string[]; border: string[] } {
  return colorAllowed(stream) ? { head: ['cyan'], border: ['grey'] } : { head: [], border: [] };
}
