import { copyFile, mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { applyEdits, modify, type ParseError, parse } from 'jsonc-parser';
import {
  CODEX_WIRE_API,
  claudeBaseUrl,
  claudeSettingsPath,
  codexBaseUrl,
  codexConfigPath,
  readText,
} from './paths.js';
import type { AgentName } from './wrap.js';

/** The persistent configuration `svc setup` proposes for one agent. */
export interface SetupPlan {
  path: string;
  /** The file now (undefined: it does not exist). */
  before: string | undefined;
  after: string;
}

type Env = Record<string, string | undefined>;

/**
 * Claude Code: `env.ANTHROPIC_BASE_URL` in its settings file (comments and
 * formatting of the rest kept).
 */
export function claudeSettings(before: string | undefined, svcUrl: string): string {
  const text = before ?? '{}\n';
  const errors: ParseError[] = [];
  const value = parse(text, errors, { allowTrailingComma: true });
  if (errors.length > 0 || typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error('is not a JSON object; fix or move it, then run svc setup claude again');
  }
  const edits = modify(text, ['env', 'ANTHROPIC_BASE_URL'], claudeBaseUrl(svcUrl), {
    formattingOptions: { insertSpaces: true, tabSize: 2, eol: '\n' },
  });
  const out = applyEdits(text, edits);
  return out.endsWith('\n') ? out : `${out}\n`;
}

/**
 * Codex: a `[model_providers.svc]` table (base_url .../v1, wire_api =
 * "responses") and the top-level `model_provider = "svc"`; the rest of the
 * file is kept line for line.
 */
export function codexConfig(before: string | undefined, svcUrl: string, env: Env = process.env): string {
  const lines = (before ?? '').split('\n');
  if (lines.at(-1) === '') lines.pop();
  const isHeader = (l: string) => /^\s*\[/.test(l);
  const firstTable = lines.findIndex(isHeader);
  const topEnd = firstTable < 0 ? lines.length : firstTable;
  const providerLine = 'model_provider = "svc"';
  const current = lines.slice(0, topEnd).findIndex((l) => /^\s*model_provider\s*=/.test(l));
  if (current >= 0) lines[current] = providerLine;
  else lines.splice(0, 0, providerLine, ...(lines.length > 0 && topEnd === 0 ? [''] : []));
  const block = [
    '[model_providers.svc]',
    'name = "svc"',
    `base_url = "${codexBaseUrl(svcUrl)}"`,
    `wire_api = "${CODEX_WIRE_API}"`,
    env.OPENAI_API_KEY ? 'env_key = "OPENAI_API_KEY"' : 'requires_openai_auth = true',
  ];
  const start = lines.findIndex((l) => /^\s*\[\s*model_providers\.("?)svc\1\s*\]\s*(#.*)?$/.test(l));
  if (start >= 0) {
    let end = start + 1;
    while (end < lines.length && !isHeader(lines[end] ?? '')) end++;
    // Keep the blank lines that separated it from the next table.
    while (end > start + 1 && (lines[end - 1] ?? '').trim() === '') end--;
    lines.splice(start, end - start, ...block);
  } else {
    if (lines.length > 0 && (lines.at(-1) ?? '').trim() !== '') lines.push('');
    lines.push(...block);
  }
  return `${lines.join('\n')}\n`;
}

/** What `svc setup AGENT` would write. */
export async function setupPlan(
  agent: AgentName,
  svcUrl: string,
  env: Env = process.env,
): Promise<SetupPlan> {
  const path = agent === 'claude' ? claudeSettingsPath(env) : codexConfigPath(env);
  const before = await readText(path);
  try {
    const after = agent === 'claude' ? claudeSettings(before, svcUrl) : codexConfig(before, svcUrl, env);
    return { path, before, after };
  } catch (err) {
    throw new Error(`${path} ${(err as Error).message}`);
  }
}

/**
 * A unified diff of two texts (2 lines of context), `--- a` / `+++ b`;
 * empty when they are equal.
 */
export function unifiedDiff(a: string, b: string, nameA: string, nameB: string): string {
  if (a === b) return '';
  const x = a === '' ? [] : a.replace(/\n$/, '').split('\n');
  const y = b.replace(/\n$/, '').split('\n');
  // LCS table (the files are small).
  const n = x.length;
  const m = y.length;
  const lcs = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      (lcs[i] as number[])[j] =
        x[i] === y[j]
          ? ((lcs[i + 1] as number[])[j + 1] ?? 0) + 1
          : Math.max((lcs[i + 1] as number[])[j] ?? 0, (lcs[i] as number[])[j + 1] ?? 0);
  const ops: Array<{ op: ' ' | '-' | '+'; text: string; ai: number; bi: number }> = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) ops.push({ op: ' ', text: x[i++] ?? '', ai: i, bi: ++j });
    else if (i < n && (j >= m || ((lcs[i + 1] as number[])[j] ?? 0) >= ((lcs[i] as number[])[j + 1] ?? 0)))
      ops.push({ op: '-', text: x[i++] ?? '', ai: i, bi: j });
    else ops.push({ op: '+', text: y[j++] ?? '', ai: i, bi: j });
  }
  const out = [`--- ${nameA}`, `+++ ${nameB}`];
  const CONTEXT = 2;
  let k = 0;
  while (k < ops.length) {
    if (ops[k]?.op === ' ') {
      k++;
      continue;
    }
    let start = Math.max(0, k - CONTEXT);
    let end = k;
    while (end < ops.length) {
      let next = end;
      while (next < ops.length && ops[next]?.op !== ' ') next++;
      let gap = next;
      while (gap < ops.length && ops[gap]?.op === ' ') gap++;
      if (gap < ops.length && gap - next <= 2 * CONTEXT) end = gap;
      else {
        end = Math.min(ops.length, next + CONTEXT);
        break;
      }
    }
    const hunk = ops.slice(start, end);
    const aStart = hunk.filter((o) => o.op !== '+').length ? (hunk.find((o) => o.op !== '+')?.ai ?? 0) : 0;
    const bStart = hunk.filter((o) => o.op !== '-').length ? (hunk.find((o) => o.op !== '-')?.bi ?? 0) : 0;
    out.push(
      `@@ -${aStart},${hunk.filter((o) => o.op !== '+').length} +${bStart},${hunk.filter((o) => o.op !== '-').length} @@`,
    );
    for (const o of hunk) out.push(`${o.op}${o.text}`);
    k = end;
    start = end;
  }
  return `${out.join('\n')}\n`;
}

/** Writes the plan: a backup of the old file (`*.svc-backup`), then the new one, atomically. */
export async function writePlan(plan: SetupPlan): Promise<string | undefined> {
  await mkdir(dirname(plan.path), { recursive: true });
  let backup: string | undefined;
  if (plan.before !== undefined) {
    backup = `${plan.path}.svc-backup`;
    await copyFile(plan.path, backup);
  }
  const tmp = `${plan.path}.svc-${process.pid}.tmp`;
  await writeFile(tmp, plan.after);
  await rename(tmp, plan.path);
  return backup;
}
