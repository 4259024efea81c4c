import { describe, expect, it } from 'vitest';
import { compressRead, THINNED_NOTE, thinNumbers } from '../../src/engine/compressors/read.js';
import { extractIdentifiers } from '../../src/engine/identifiers.js';
import { compressMessages } from '../../src/engine/index.js';
import { parseMarkers } from '../../src/engine/markers.js';
import { commandKind, toolKind } from '../../src/engine/router.js';
import type { ChatMessage } from '../../src/engine/types.js';
import { ctxOf } from './helpers.js';

/** A source file of `n` lines, as Claude Code's Read tool prints it (`     12→code`). */
function sourceFile(n: number, from = 1): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const k = from + i;
    const code =
      k % 17 === 0
        ? ''
        : k % 5 === 0
          ? `export function handler_${k}(req: Request): Response {`
          : `  const value_${k} = await store.get('key-${k}', { retries: ${k % 4} }); // step ${k}`;
    lines.push(`${String(k).padStart(6)}→${code}`);
  }
  return lines.join('\n');
}

/** Rebuilds a listing from `thinNumbers` output: every unnumbered line takes the previous number + 1. */
function rebuild(lines: readonly string[]): string[] {
  let prev = 0;
  return lines.map((l) => {
    const m = /^(\d+)(→|\t)(.*)$/.exec(l);
    if (m) {
      prev = Number(m[1]);
      return l;
    }
    prev++;
    return `${prev}→${l}`;
  });
}

function call(id: string, name: string, args: Record<string, unknown>): ChatMessage {
  return {
    role: 'assistant',
    content: null,
    tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
  } as ChatMessage;
}

function text(m: ChatMessage): string {
  return typeof m.content === 'string' ? m.content : '';
}

describe('file reads stay lossless at first sight', () => {
  it('a Read of a large source file keeps every line; only reversible steps apply', () => {
    const file = sourceFile(465);
    const messages: ChatMessage[] = [
      { role: 'user', content: 'rename handler_215 to handleOrders' },
      call('r1', 'Read', { file_path: '/repo/src/orders.ts' }),
      { role: 'tool', tool_call_id: 'r1', content: file },
      { role: 'user', content: 'go on' },
    ];
    const out = compressMessages(messages, { model: 'gpt-4o' });
    const read = text(out.result.messages[2]!);
    expect(out.ccrEntries.size).toBe(0);
    expect(parseMarkers(read)).toEqual([]);
    // every line of the file is there, and the numbers can be rebuilt exactly
    const shown = read.split('\n');
    expect(shown[0]).toBe(THINNED_NOTE);
    expect(rebuild(shown.slice(1))).toEqual(file.split('\n').map((l) => l.trimStart()));
    expect(out.result.tokens_after).toBeLessThan(out.result.tokens_before);
  });

  it('`cat` through a shell tool, a Glob listing and a fetched page keep every line or word', () => {
    const plain = sourceFile(300)
      .split('\n')
      .map((l) => l.replace(/^ *\d+→/, ''))
      .join('\n');
    const paths = Array.from(
      { length: 400 },
      (_, i) => `/Users/dev/work/app/src/module_${i}/index_${i}.ts`,
    ).join('\n');
    const page = Array.from(
      { length: 200 },
      (_, i) =>
        `Section ${i}: the option retry_limit_${i} sets how often a request is retried before it fails.`,
    ).join('\n');
    const messages: ChatMessage[] = [
      { role: 'user', content: 'look around' },
      call('c1', 'Bash', { command: 'cd /repo && cat src/orders.ts' }),
      { role: 'tool', tool_call_id: 'c1', content: plain },
      call('g1', 'Glob', { pattern: '**/*.ts' }),
      { role: 'tool', tool_call_id: 'g1', content: paths },
      call('w1', 'WebFetch', { url: 'https://docs.example.com/retries' }),
      { role: 'tool', tool_call_id: 'w1', content: page },
      { role: 'user', content: 'now fix it' },
    ];
    const out = compressMessages(messages, { model: 'gpt-4o' });
    const all = out.result.messages.map(text).join('\n');
    for (const source of [plain, paths, page])
      for (const id of extractIdentifiers(source)) expect(all, id).toContain(id);
    expect(out.ccrEntries.size).toBe(0);
  });

  it('two files printed by one chained shell command (Codex `sed -n … && sed -n …`) keep every line', () => {
    const plain = (from: number) =>
      sourceFile(220, from)
        .split('\n')
        .map((l) => l.replace(/^ *\d+→/, ''))
        .join('\n');
    const output = `Chunk ID: 1a2b3c\nProcess exited with code 0\nOutput:\n${plain(1)}\n${plain(400)}`;
    const messages: ChatMessage[] = [
      { role: 'user', content: 'compare the two handlers' },
      call('x1', 'exec_command', { cmd: "sed -n '1,220p' src/a.ts && sed -n '400,620p' src/b.ts" }),
      { role: 'tool', tool_call_id: 'x1', content: output },
      { role: 'user', content: 'go on' },
    ];
    const out = compressMessages(messages, { model: 'gpt-4o' });
    const shown = text(out.result.messages[2]!);
    expect(out.ccrEntries.size).toBe(0);
    expect(parseMarkers(shown)).toEqual([]);
    for (const line of output.split('\n')) expect(shown).toContain(line);
  });

  it('a read shown again becomes a marker that names the hash of the exact text', () => {
    const file = sourceFile(120);
    const again = sourceFile(60, 31); // lines 31-90, read again
    const messages: ChatMessage[] = [
      { role: 'user', content: 'read it' },
      call('r1', 'Read', { file_path: '/repo/a.ts' }),
      { role: 'tool', tool_call_id: 'r1', content: file },
      call('r2', 'Read', { file_path: '/repo/a.ts', offset: 31, limit: 60 }),
      { role: 'tool', tool_call_id: 'r2', content: again },
      { role: 'user', content: 'ok' },
    ];
    const out = compressMessages(messages, { model: 'gpt-4o' });
    const second = text(out.result.messages[4]!);
    const [marker] = parseMarkers(second);
    expect(marker?.note).toBe('shown earlier in the conversation');
    expect(out.ccrEntries.get(marker!.hash)).toBe(again);
    expect(text(out.result.messages[2]!)).not.toContain('[svc: 1'); // the first read: no marker
  });

  it('thinNumbers keeps the first number of each run and every 10th; short listings keep all', () => {
    const lines = sourceFile(25, 8).split('\n');
    const { lines: thin, thinned } = thinNumbers(lines);
    expect(thinned).toBe(true);
    expect(thin[0]).toMatch(/^8→/);
    expect(thin[2]).toMatch(/^10→/);
    expect(thin[1]).not.toMatch(/^\d+→/);
    expect(rebuild(thin)).toEqual(lines.map((l) => l.trimStart()));
    expect(thinNumbers(lines.slice(0, 10)).thinned).toBe(false);
    const out = compressRead(sourceFile(10), ctxOf());
    expect(out).toEqual({ text: sourceFile(10).replace(/^ +/gm, ''), lossy: false });
  });
});

describe('command output that looks like code', () => {
  it('is selected as structured text: its last lines and new names stay', () => {
    const body = sourceFile(300)
      .split('\n')
      .map((l) => l.replace(/^ *\d+→/, ''));
    const output = [
      '$ bun test src/',
      ...body,
      '$ tsc --noEmit',
      '[main 6c8aa66] Hide the selector',
      ' 1 file changed',
    ];
    const messages: ChatMessage[] = [
      { role: 'user', content: 'commit it' },
      call('b1', 'Bash', { command: 'bun test src/ && git commit -am wip' }),
      { role: 'tool', tool_call_id: 'b1', content: output.join('\n') },
      { role: 'user', content: 'next' },
    ];
    const out = compressMessages(messages, { model: 'gpt-4o' });
    const shown = text(out.result.messages[2]!);
    expect(shown).toContain('[main 6c8aa66] Hide the selector');
    expect(parseMarkers(shown)).toHaveLength(1);
    expect(shown).not.toContain('bodies folded');
  });
});

describe('tool kinds', () => {
  it('knows reads, listings and pages by tool name and shell command', () => {
    expect(toolKind('Read', '{"file_path":"/a"}')).toBe('read');
    expect(toolKind('Glob', '{"pattern":"*"}')).toBe('list');
    expect(toolKind('WebFetch', '{"url":"https://x"}')).toBe('doc');
    expect(toolKind('str_replace_editor', '{"command":"view","path":"/a"}')).toBe('read');
    expect(toolKind('exec_command', '{"cmd":"sed -n \'1,130p\' docs/a.md"}')).toBe('read');
    expect(toolKind('Bash', '{"command":"cd /repo && find . -name \'*.ts\' | head -50"}')).toBe('list');
    expect(commandKind('open src/app.py 120')).toBe('read');
    expect(commandKind('git show HEAD:src/a.ts')).toBe('read');
    expect(commandKind('ls -la 2>&1')).toBe('list');
    expect(commandKind('cat a.ts > b.ts')).toBeUndefined();
    expect(commandKind('bun test && cat out.log')).toBeUndefined();
    expect(commandKind('grep -rn foo src')).toBeUndefined();
    // chains of reads are reads; a chain with any other command is not
    expect(commandKind("sed -n '1,220p' a.md && sed -n '1,80p' b.md")).toBe('read');
    expect(commandKind('cat a.md && echo "---" && cat b.md; nl -ba c.ts')).toBe('read');
    expect(commandKind('ls src && ls test')).toBe('list');
    expect(commandKind('ls src && cat src/a.ts')).toBe('read');
    expect(commandKind("cat a.ts && sed -i 's/a/b/' a.ts")).toBeUndefined();
    expect(commandKind("grep -n 'x && cat y' a.ts")).toBeUndefined();
    expect(commandKind('cd /repo && echo start')).toBeUndefined();
    expect(toolKind('Edit', '{}')).toBeUndefined();
  });
});

describe('--lossless', () => {
  function session(): ChatMessage[] {
    const orders = Array.from({ length: 160 }, (_, i) => ({
      id: `ord_${String(i).padStart(5, '0')}`,
      status: i % 4 === 1 ? 'failed' : 'paid',
      total_cents: 1000 + i * 7,
    }));
    const log = Array.from(
      { length: 300 },
      (_, i) => `2025-01-01T10:${String(i % 60).padStart(2, '0')}:00Z INFO worker-${i % 7} job-${i} done`,
    ).join('\n');
    const json = JSON.stringify(orders, null, 2);
    return [
      { role: 'user', content: 'check orders' },
      call('a', 'get_orders', {}),
      { role: 'tool', tool_call_id: 'a', content: json },
      call('b', 'Bash', { command: 'tail -300 worker.log' }),
      { role: 'tool', tool_call_id: 'b', content: log },
      call('c', 'Read', { file_path: '/repo/a.ts' }),
      { role: 'tool', tool_call_id: 'c', content: sourceFile(200) },
      call('d', 'get_orders', {}),
      { role: 'tool', tool_call_id: 'd', content: json },
      { role: 'user', content: 'which failed?' },
    ];
  }

  it('keeps every identifier, emits no marker and no CCR entry, and still saves tokens', () => {
    const messages = session();
    const out = compressMessages(messages, { model: 'gpt-4o', lossless: true });
    expect(out.ccrEntries.size).toBe(0);
    expect(out.result.ccr_hashes).toEqual([]);
    const all = out.result.messages.map(text).join('\n');
    expect(parseMarkers(all)).toEqual([]);
    for (const m of messages) for (const id of extractIdentifiers(text(m))) expect(all, id).toContain(id);
    expect(out.result.tokens_after).toBeLessThan(out.result.tokens_before * 0.8);
    // the second identical output is a plain reference to the first call
    expect(text(out.result.messages[8]!)).toBe('[svc: identical to the output of a above]');
    // the lossy default does drop items from the same JSON
    const lossy = compressMessages(messages, { model: 'gpt-4o' });
    expect(lossy.ccrEntries.size).toBeGreaterThan(0);
  });

  it('drops no message even over the context limit', () => {
    const messages = session();
    const out = compressMessages(messages, { model: 'gpt-4o', lossless: true, contextLimit: 2000 });
    expect(out.result.messages.length).toBe(messages.length);
    expect(out.ccrEntries.size).toBe(0);
  });
});
