import { callScopedMap, inCall } from './call-scope.js';
import { parseJsonContent, parseJsonLines } from './compressors/json-parse.js';
import { isBlank, joinedLength, withoutTaskLabels } from './compressors/lines.js';
import { isNumberedListing, listingBody } from './compressors/listing.js';
import { STACK_RE } from './compressors/log.js';
import type { ContentType } from './compressors/types.js';

/** Lines inspected by the line-based detectors (enough to decide, cheap on huge outputs). */
const SAMPLE_LINES = 400;
/** Characters of each line the detectors look at. */
const MAX_TESTED_CHARS = 500;

const DIFF_RE = /^(?:diff --git |--- a\/|\+\+\+ b\/|@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@)/m;
const HUNK_RE = /^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@/m;
const HTML_START_RE = /^\s*(?:<!doctype html|<html[\s>]|<head[\s>]|<body[\s>])/i;
const TAG_RE = /<\/?[a-z][a-z0-9-]*(?:\s[^<>]*)?>/gi;
const GREP_LINE_RE = /^(?:\.{0,2}\/)?[\w@.+~-]+(?:\/[\w@.+~ -]+)*\.?[\w-]*[:-]\d+[:-]/;
const PATH_LINE_RE = /^(?:[A-Za-z]:)?[.~]?\/?(?:[\w@.+-]+\/)+[\w@.+ -]*\/?$/;
const TIMESTAMP_RE =
  /^\W{0,3}(?:\d{4}-\d\d-\d\d[T ]\d\d:\d\d|\d\d:\d\d:\d\d|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d|\d{10,13}\b|I\d{4} )/;
const LEVEL_RE =
  /\b(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL|CRITICAL|NOTICE)\b|^\[(?:info|warn|error|debug)\]|"level":/;
const TEST_RE =
  /^\s*(?:PASS|FAIL|ok|not ok|\((?:pass|fail)\) |✓|✗|×|\d+\) |test \S+ \.\.\.|=+ .* =+$|-+ .* -+$)/;
const CODE_RE =
  /^\s*(?:def |class |function |import |from \S+ import|export |const |let |var |public |private |protected |fn |func |package |#include|defmodule |defp? |module |interface |type |struct |impl |use |require |return\b|if\s*\(|for\s*\(|end$|\}|[\w.]+\(.*\);?$)|[{;]\s*$/;

/** A line that starts a JSON value. */
const JSON_START_RE = /^\s*[{[]/;
/** A line holding one JSON object. */
const JSON_LINE_RE = /^\s*\{.*\}\s*$/;
/** A row of a column-aligned table: at least three cells separated by runs of spaces. */
const TABLE_ROW_RE = /^\S.*?\S(?: {2,}|\t)\S.*?(?: {2,}|\t)\S/;
/** Column alignment or code punctuation: no prose. */
const NOT_PROSE_RE = /\S {2,}\S|[{}[\];=<>|\\\t]/;
/** A word of prose. */
const WORD_RE = /[A-Za-z]{2,}/;
/** A line of natural language: six or more words, no column alignment, no code punctuation. */
const PROSE_LINE = {
  test(line: string): boolean {
    if (NOT_PROSE_RE.test(line)) return false;
    let words = 0;
    for (const w of line.trim().split(' ')) if (WORD_RE.test(w) && ++words >= 6) return true;
    return false;
  },
};

/**
 * The lines the detectors test: the non-blank ones, each cut to
 * `MAX_TESTED_CHARS` (detectors look at the start of a line; the cut keeps
 * their cost linear on huge lines). Made once per text, for every detector.
 */
function testedLines(lines: readonly string[]): string[] {
  const out: string[] = [];
  for (const l of lines)
    if (!isBlank(l)) out.push(l.length > MAX_TESTED_CHARS ? l.slice(0, MAX_TESTED_CHARS) : l);
  return out;
}

/**
 * True when at least `min` of the tested lines match: the share of matching
 * lines, as a ratio, reaches `min`. Stops as soon as the lines left cannot
 * change the answer (the ratio only grows with each match).
 */
function share(tested: readonly string[], re: { test(line: string): boolean }, min: number): boolean {
  const n = tested.length;
  if (n === 0) return 0 >= min;
  let hit = 0;
  for (let i = 0; i < n; i++) {
    if (re.test(tested[i]!)) {
      hit++;
      if (hit / n >= min) return true;
    } else if ((hit + n - i - 1) / n < min) return false;
  }
  return hit / n >= min;
}

/** True when `head` holds at least `min` tags and one per 60 characters: counts until that is settled. */
function tagDense(head: string, min: number): boolean {
  if (!head.includes('<')) return false;
  TAG_RE.lastIndex = 0;
  let tags = 0;
  while (TAG_RE.test(head)) {
    tags++;
    if (tags >= min && tags * 60 > head.length) {
      TAG_RE.lastIndex = 0;
      return true;
    }
  }
  return false;
}

/**
 * Detects what a text is. Rules, first match wins: JSON (document, JSON
 * Lines, or either after a short preamble); diff; HTML; search results or file
 * lists; logs (timestamps, levels, test results, stack traces, JSON lines);
 * tables; source code; prose (mostly sentences); other structured text. Numbered listings (`cat -n`, Read tools)
 * are judged by their content without the numbers.
 */
export function detectContentType(text: string): ContentType {
  if (parseJsonContent(text)) return 'json';
  const lines = text.split('\n', SAMPLE_LINES);
  const numbered = isNumberedListing(lines);
  if (inCall()) lastDetected.set('last', { text, numbered });
  if (numbered) {
    // a file read by an agent: JSON Lines and logs by their content, anything else is a source file
    const body = listingBody(lines);
    const jsonLines = body.filter((l) => JSON_START_RE.test(l));
    if (jsonLines.length >= body.length * 0.5 && parseJsonLines(jsonLines)) return 'json';
    const tested = testedLines(body);
    if (share(tested, TIMESTAMP_RE, 0.3) || share(tested, LEVEL_RE, 0.25)) return 'log';
    return 'code';
  }
  // a hunk header holds `@@ -`: one native search settles most texts
  if (text.includes('@@ -') && DIFF_RE.test(text.slice(0, 20000)) && HUNK_RE.test(text)) return 'diff';
  // the sampled lines as one text: a prefix of `text`
  const headLength = joinedLength(lines);
  const head = headLength === text.length ? text : text.slice(0, headLength);
  if (HTML_START_RE.test(head)) return 'html';
  if (tagDense(head, 10)) return 'html';
  // a task runner's labels (`pkg:task: `) hide the levels, results and frames behind them
  const tested = testedLines(withoutTaskLabels(lines));
  if (share(tested, TIMESTAMP_RE, 0.3) || share(tested, LEVEL_RE, 0.25) || share(tested, TEST_RE, 0.2))
    return 'log';
  if (share(tested, JSON_LINE_RE, 0.5) || share(tested, STACK_RE, 0.3)) return 'log';
  if (share(tested, GREP_LINE_RE, 0.6) || share(tested, PATH_LINE_RE, 0.8)) return 'search';
  if (share(tested, TABLE_ROW_RE, 0.6)) return 'table';
  if (share(tested, CODE_RE, 0.25)) return 'code';
  return share(tested, PROSE_LINE, 0.4) ? 'prose' : 'text';
}

/** The last text `detectContentType` looked at past JSON in this engine call, and whether it is a numbered listing. */
const lastDetected = callScopedMap<'last', { text: string; numbered: boolean }>();

/**
 * True when the first `SAMPLE_LINES` lines of `text` are a numbered listing
 * (`isNumberedListing`). The router asks it of the text it has just given
 * `detectContentType`, which answered it already: then it costs a comparison.
 */
export function isNumberedText(text: string): boolean {
  const last = lastDetected.get('last');
  if (last !== undefined && last.text === text) return last.numbered;
  return isNumberedListing(text.split('\n', SAMPLE_LINES));
}

/**
 * What a tool call does, as far as compression cares:
 * - `read`: shows a file (an agent's Read tool, `cat`/`head`/`tail`/`sed -n`/`nl`,
 *   `git show REV:PATH`, editor windows such as SWE-agent's `open`/`goto`/`scroll_*`);
 * - `list`: lists paths (Glob, LS, `ls`, `find`, `tree`, `fd`, `git ls-files`, `rg --files`);
 * - `doc`: fetches a page (WebFetch and the like), or reports a subagent's findings (Task, Agent).
 * Reads and listings are what an agent acts on next: they stay lossless at
 * first sight (`compressRead`); pages keep every word.
 */
export type ToolKind = 'read' | 'list' | 'doc';

const READ_TOOLS = new Set([
  'read',
  'read_file',
  'readfile',
  'view',
  'view_file',
  'open',
  'open_file',
  'goto',
  'scroll_up',
  'scroll_down',
  'notebookread',
  'cat',
]);
const LIST_TOOLS = new Set([
  'glob',
  'ls',
  'list',
  'list_files',
  'list_dir',
  'list_directory',
  'find_file',
  'find_files',
]);
const DOC_TOOLS = new Set(['webfetch', 'web_fetch', 'fetch', 'fetch_url', 'read_url', 'browse', 'get_page']);
/** A subagent's report (Claude Code's Task/Agent tools): findings the agent acts on, kept word for word. */
const REPORT_TOOLS = new Set(['task', 'agent']);
/** Shell tools whose command argument decides the kind. */
const SHELL_TOOLS = new Set([
  'bash',
  'shell',
  'exec_command',
  'run_command',
  'run_bash_command',
  'terminal',
  'execute_command',
  'local_shell',
]);
/** Programs that print a file (SWE-agent's editor commands included). */
const READ_PROGRAMS = new Set([
  'cat',
  'head',
  'tail',
  'nl',
  'bat',
  'open',
  'goto',
  'scroll_up',
  'scroll_down',
  'decompile',
  'disassemble',
]);
const LIST_PROGRAMS = new Set(['ls', 'find', 'tree', 'fd', 'fdfind', 'find_file']);
/** Every program `simpleCommandKind` may find a read or a listing. */
const KNOWN_PROGRAMS = new Set([...READ_PROGRAMS, ...LIST_PROGRAMS, 'sed', 'git', 'rg']);
/** Filters after a pipe that print some of their input lines unchanged. */
const PASS_FILTERS = new Set(['head', 'tail', 'sort', 'uniq', 'nl', 'cat']);

/** Commands that only separate others in a chain. */
const SEPARATOR_COMMAND_RE = /^(?:cd|echo|printf)(?:\s|$)/;
/** `cd DIR &&` (or `;`) before the command. */
const CD_PREFIX_RE = /^(?:cd\s+\S+\s*(?:&&|;)\s*)+/;
/** Environment assignments before the command. */
const ENV_PREFIX_RE = /^(?:[A-Z_][A-Z0-9_]*=\S*\s+)+/;
/** Redirections that do not change what the command prints. */
const REDIRECT_RE = /\s(?:\d?>&\d|2>\s*\/dev\/null)/g;
const QUOTED_ARG_RE = /'[^']*'|"[^"]*"/g;
/** Anything that makes more than one program (or pipes into a file) outside quotes. */
const COMPOUND_RE = /;|&&|\|\||>|<|\$\(|`/;
const BLANKS_RE = /\s+/;
const DIRECTORY_RE = /^.*\//;
/** `sed -n` printing a range of lines. */
const SED_PRINT_RE = /\d+(?:,\$?\d*)?p/;
/** `REV:PATH` of `git show`. */
const REV_PATH_RE = /^\S*:\S+$/;
/** An MCP tool's server prefix. */
const MCP_PREFIX_RE = /^mcp__.*__/;

/** The command a shell tool call runs (`command`, `cmd`; arrays joined), or ''. */
function commandOf(args: Record<string, unknown>): string {
  const c = args.command ?? args.cmd ?? args.input;
  if (Array.isArray(c)) {
    // ["bash", "-lc", "cat x"] -> "cat x"
    const last = c[c.length - 1];
    return typeof last === 'string' ? last : '';
  }
  return typeof c === 'string' ? c : '';
}

/** The commands of a `&&`/`;` chain (separators inside quotes do not count). */
function chainedCommands(command: string): string[] {
  const out: string[] = [];
  let quote = '';
  let start = 0;
  for (let i = 0; i < command.length; i++) {
    const ch = command[i]!;
    if (quote) {
      if (ch === quote) quote = '';
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === ';' || (ch === '&' && command[i + 1] === '&')) {
      out.push(command.slice(start, i));
      if (ch === '&') i++;
      start = i + 1;
    }
  }
  out.push(command.slice(start));
  return out.map((c) => c.trim()).filter((c) => c !== '');
}

/**
 * Kind of a shell command line. A chain (`sed -n '1,80p' a.ts && cat b.ts`)
 * is a read when every command in it reads or lists (`cd` and `echo`
 * separators aside) and at least one reads, a listing when all list: its
 * output is those files or paths, nothing else.
 */
export function commandKind(command: string): ToolKind | undefined {
  const chain = chainedCommands(command).filter((c) => !SEPARATOR_COMMAND_RE.test(c));
  if (chain.length <= 1) return simpleCommandKind(chain[0] ?? '');
  const kinds = chain.map(simpleCommandKind);
  if (!kinds.every((k) => k === 'read' || k === 'list')) return undefined;
  return kinds.includes('read') ? 'read' : 'list';
}

/** Kind of one shell command: by its first program, after `cd DIR &&` and env assignments. */
function simpleCommandKind(command: string): ToolKind | undefined {
  let cmd = command.trim().replace(CD_PREFIX_RE, '');
  cmd = cmd.replace(ENV_PREFIX_RE, '').replace(REDIRECT_RE, '');
  const words = cmd.split('|')[0]!.trim().split(BLANKS_RE);
  const program = (words[0] ?? '').replace(DIRECTORY_RE, '');
  // most commands run a program that shows no file: settled before the pipeline is parsed
  if (!KNOWN_PROGRAMS.has(program)) return undefined;
  const bare = cmd.replace(QUOTED_ARG_RE, "''");
  // one program, optionally piped into a filter that keeps lines as they are (`| head -50`)
  if (COMPOUND_RE.test(bare)) return undefined;
  const stages = bare.split('|').map((s) => s.trim().split(BLANKS_RE));
  for (const stage of stages.slice(1))
    if (!PASS_FILTERS.has(stage[0] ?? '') && !(stage[0] === 'sed' && stage.includes('-n'))) return undefined;
  if (READ_PROGRAMS.has(program)) return 'read';
  if (program === 'sed' && words.includes('-n') && SED_PRINT_RE.test(cmd)) return 'read';
  if (LIST_PROGRAMS.has(program)) return 'list';
  if (program === 'git' && words[1] === 'show' && REV_PATH_RE.test(words[2] ?? '')) return 'read';
  if (program === 'git' && words[1] === 'ls-files') return 'list';
  if ((program === 'rg' || program === 'fd') && words.includes('--files')) return 'list';
  return undefined;
}

/** Kind of a tool call by its name and arguments (JSON text), or undefined when it is none of them. */
export function toolKind(name: string, args: string): ToolKind | undefined {
  const lower = name.toLowerCase();
  const n = lower.startsWith('mcp__') ? lower.replace(MCP_PREFIX_RE, '') : lower;
  if (READ_TOOLS.has(n)) return 'read';
  if (LIST_TOOLS.has(n)) return 'list';
  if (DOC_TOOLS.has(n) || REPORT_TOOLS.has(n)) return 'doc';
  if (!SHELL_TOOLS.has(n) && n !== 'str_replace_editor' && n !== 'str_replace_based_edit_tool')
    return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const a = parsed as Record<string, unknown>;
  if (n === 'str_replace_editor' || n === 'str_replace_based_edit_tool')
    return a.command === 'view' ? 'read' : undefined;
  return commandKind(commandOf(a));
}
