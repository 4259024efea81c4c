import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SvcError } from '../errors.js';

/** Where one input comes from: a file, or stdin. */
export interface InputSource {
  /** Name used in messages and in multi-file output: the path as given, or `stdin`. */
  label: string;
  /** Absent for stdin. */
  path?: string;
}

/** The inputs of one `svc compress` run. */
export interface InputPlan {
  sources: InputSource[];
  /** True with several arguments or a folder: one JSON line per file. */
  many: boolean;
}

const STDIN: InputSource = { label: 'stdin' };

function fsProblem(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file or folder';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'is a folder';
  return `cannot read (${code ?? String(err)})`;
}

async function jsonFilesUnder(folder: string): Promise<string[]> {
  const found: string[] = [];
  const entries = await readdir(folder, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const path = join(folder, entry.name);
    if (entry.isDirectory()) found.push(...(await jsonFilesUnder(path)));
    else if (entry.name.endsWith('.json')) found.push(path);
  }
  return found;
}

/**
 * Expands the FILE arguments: none or `-` is stdin, a folder is every
 * `*.json` below it (sorted, dot-folders skipped). A missing path or an
 * empty folder is an SVC_BAD_INPUT naming it.
 */
export async function planInputs(args: readonly string[]): Promise<InputPlan> {
  if (args.length === 0) return { sources: [STDIN], many: false };
  const sources: InputSource[] = [];
  let sawFolder = false;
  for (const arg of args) {
    if (arg === '-') {
      sources.push(STDIN);
      continue;
    }
    const info = await stat(arg).catch((err: unknown) => {
      throw new SvcError('SVC_BAD_INPUT', `${arg}: ${fsProblem(err)}`, { cause: err });
    });
    if (!info.isDirectory()) {
      sources.push({ label: arg, path: arg });
      continue;
    }
    sawFolder = true;
    const files = await jsonFilesUnder(arg).catch((err: unknown) => {
      throw new SvcError('SVC_BAD_INPUT', `${arg}: ${fsProblem(err)}`, { cause: err });
    });
    if (files.length === 0) throw new SvcError('SVC_BAD_INPUT', `${arg}: no .json files in this folder`);
    for (const file of files) sources.push({ label: file, path: file });
  }
  if (sources.filter((s) => s.path === undefined).length > 1) {
    throw new SvcError('SVC_BAD_INPUT', '-: stdin can be read only once');
  }
  return { sources, many: sources.length > 1 || sawFolder };
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) {
    throw new SvcError(
      'SVC_BAD_INPUT',
      'stdin: no input: give a FILE or pipe JSON in (svc compress < convo.json)',
    );
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Reads one source as UTF-8 text; unreadable files are SVC_BAD_INPUT naming the file. */
export async function readSource(source: InputSource): Promise<string> {
  if (source.path === undefined) return readStdin();
  try {
    return await readFile(source.path, 'utf8');
  } catch (err) {
    throw new SvcError('SVC_BAD_INPUT', `${source.label}: ${fsProblem(err)}`, { cause: err });
  }
}
