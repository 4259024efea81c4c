import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openToinStore } from '../../src/toin/store.js';
import { fitTable, wrapText } from '../../src/ui/fit-table.js';
import { historyTable, shortTimestamp } from '../../src/ui/history-table.js';
import { colorAllowed } from '../../src/ui/term.js';
import { BIN, ROOT, runCli, tempHome } from './helpers.js';

const ESC = new RegExp(`${String.fromCharCode(27)}\\[`);
const COMMANDS = readdirSync(join(ROOT, 'commands'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.replace(/\.ts$/, ''));

const tooWide = (text: string, width = 80) => text.split('\n').filter((l) => [...l].length > width);

describe('CLI conventions', () => {
  const home = tempHome('svc-conv-');
  const svc = (args: string[], env: Record<string, string> = {}) => runCli(args, home.dir, { env });

  beforeAll(async () => {
    // Savings, TOIN shapes and history to render: compress every sample once.
    const run = await svc(['compress', join(ROOT, 'fixtures', 'samples')]);
    expect(run.code, run.stderr).toBe(0);
    // TOIN learns from the proxy's tool outputs; a few shapes written through its store.
    const toin = await openToinStore({ path: join(home.dir, '.svc', 'toin.json') });
    toin.observe(
      ['search_repository_files', 'run_shell_command', 'read_file'].map((tool, i) => ({
        event: 'compressed' as const,
        shape: `${tool}#${String(i).repeat(16)}`,
        tool,
        fields: ['path', 'line', 'content', 'status'],
        hashes: [String(i).repeat(24)],
      })),
    );
    toin.retrieved('0'.repeat(24), ['path', 'status', 'content']);
    await toin.flush();
  }, 60_000);
  afterAll(() => home.cleanup());

  it('svc help, svc help COMMAND and COMMAND --help work, fit 80 columns, and show defaults and env vars', async () => {
    const top = await svc(['help']);
    expect(top.code, top.stderr).toBe(0);
    for (const name of COMMANDS) expect(top.stdout).toContain(name);
    expect(tooWide(top.stdout)).toEqual([]);
    const runs = await Promise.all(COMMANDS.flatMap((c) => [svc(['help', c]), svc([c, '--help'])]));
    for (const [i, run] of runs.entries()) {
      const name = COMMANDS[Math.floor(i / 2)];
      expect(run.code, `${name}: ${run.stderr}`).toBe(0);
      expect(run.stdout, name).toContain(`$ svc ${name}`);
      expect(tooWide(run.stdout), name).toEqual([]);
      expect(run.stdout, name).not.toMatch(ESC);
    }
    const serve = runs[COMMANDS.indexOf('serve') * 2]?.stdout ?? '';
    expect(serve).toMatch(/--port=<value>\s+\[default: 8787, env: SERVICE_PORT\]/);
    expect(serve).toMatch(
      /--messages-api-url=<value>\s+\[default:\s+https:\/\/api\.anthropic\.com\/v1,\s+env:\s+MESSAGES_TARGET_API_URL\]/,
    );
    // Variables without a flag are listed too.
    expect(serve).toContain('SERVICE_SAVINGS_PATH');
    const unknown = await svc(['help', 'nosuchcommand']);
    expect(unknown.code).not.toBe(0);
  }, 120_000);

  it('errors name flags and variables as users type them, not internal keys', async () => {
    const byFlag = await svc(['serve', '--messages-api-url', 'not a url']);
    expect(byFlag.code).toBe(2);
    expect(byFlag.stderr).toContain('--messages-api-url');
    expect(byFlag.stderr).not.toContain('messagesApiUrl');
    const byEnv = await svc(['serve'], { COMPAT_TARGET_API_URL: 'ftp://example.invalid' });
    expect(byEnv.code).toBe(2);
    expect(byEnv.stderr).toContain('COMPAT_TARGET_API_URL');
    expect(byEnv.stderr).not.toContain('compatApiUrl');
  });

  it('history, compress --summary and toin tables fit 80 columns in a pipe, with no colour codes', async () => {
    const [daily, hourly, checkpoints, summary, toin] = await Promise.all([
      svc(['history', '--format', 'table', '--series', 'daily']),
      svc(['history', '--format', 'table', '--series', 'hourly']),
      svc(['history', '--format', 'table', '--series', 'history']),
      svc(['compress', join(ROOT, 'fixtures', 'samples'), '--summary', '--no-record']),
      svc(['toin']),
    ]);
    for (const [name, text] of [
      ['daily', daily.stdout],
      ['hourly', hourly.stdout],
      ['history', checkpoints.stdout],
      ['summary', summary.stderr],
      ['toin', toin.stdout],
    ] as const) {
      expect(text, name).toContain('┌');
      expect(tooWide(text), name).toEqual([]);
      expect(text, name).not.toMatch(ESC);
    }
    expect(daily.stdout).toContain('requests');
    expect(daily.stdout).toMatch(/\d{4}-\d{2}-\d{2} /);
    expect(summary.stderr).toContain('total: 20 files');
    expect(toin.stdout).toContain('shape');
  }, 120_000);

  it('NO_COLOR=1 svc toin | cat has no escape codes; on a terminal colour appears only without NO_COLOR', async () => {
    const piped = await svc(['toin'], { NO_COLOR: '1' });
    expect(piped.code).toBe(0);
    expect(piped.stdout).toContain('shape');
    expect(piped.stdout).not.toMatch(ESC);
    // A real terminal through script(1), when the machine has it.
    const tty = (env: Record<string, string>) =>
      new Promise<string>((resolve) => {
        execFile(
          'script',
          ['-qec', `${process.execPath} ${BIN} toin`, '/dev/null'],
          {
            env: {
              PATH: process.env.PATH ?? '',
              HOME: home.dir,
              SERVICE_HOME: join(home.dir, '.svc'),
              TERM: 'xterm',
              ...env,
            },
          },
          (_err, stdout) => resolve(stdout),
        );
      });
    const [coloured, plain] = await Promise.all([tty({}), tty({ NO_COLOR: '1' })]);
    if (coloured.includes('shape')) {
      expect(coloured).toMatch(ESC);
      expect(plain).toContain('shape');
      expect(plain).not.toMatch(ESC);
    }
  }, 60_000);

  it('fitTable drops the ranked columns first, then wraps, and says what it left out', () => {
    const rows = [
      [
        'a-very-long-input-name-that-goes-on-and-on.json',
        'chat',
        '1,234',
        'router:json x3, logs:collapse, text:dedupe, code:outline',
      ],
    ];
    const cols = [
      { head: 'input', wrap: true },
      { head: 'format', drop: 1 },
      { head: 'before', right: true },
      { head: 'transforms', wrap: true },
    ];
    const wide = fitTable(cols, rows, { width: 200, stream: {} });
    expect(wide.hidden).toEqual([]);
    expect(wide.text.split('\n')).toHaveLength(5);
    const narrow = fitTable(cols, rows, { width: 40, stream: {} });
    expect(narrow.hidden).toEqual(['format']);
    expect(tooWide(narrow.text, 40)).toEqual([]);
    expect(narrow.text.replace(/[│\s]/g, '')).toContain('a-very-long');
    expect(wrapText('abc defgh ijklmnopqrstu', 5)).toBe('abc\ndefgh\nijklm\nnopqr\nstu');
    // List items stay whole: a break only after a comma.
    expect(wrapText('json x6, log x6, search x4', 12, ', ')).toBe('json x6,\nlog x6,\nsearch x4');
    expect(shortTimestamp('2026-11-24T00:00:00.000Z')).toBe('2026-11-24');
    expect(shortTimestamp('2026-11-24T13:00:00.000Z')).toBe('2026-11-24 13:00');
  });

  it('colorAllowed: a terminal without NO_COLOR only', () => {
    expect(colorAllowed({ isTTY: true }, {})).toBe(true);
    expect(colorAllowed({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colorAllowed({ isTTY: false }, {})).toBe(false);
    expect(colorAllowed({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
  });

  it('historyTable keeps every period and fits narrow widths by leaving running totals out', () => {
    const entry = (day: number) => ({
      timestamp: `2026-11-${String(day).padStart(2, '0')}T00:00:00.000Z`,
      tokens_saved: 123456789,
      compression_savings_usd: 1234.5678,
      requests: 98765,
      total_tokens_saved: 987654321,
      total_compression_savings_usd: 9876.54,
    });
    const record = {
      series: { daily: [entry(1), entry(2)] },
      history: [],
      lifetime: { tokens_saved: 1, compression_savings_usd: 1 },
    } as unknown as Parameters<typeof historyTable>[0];
    const at80 = historyTable(record, 'daily', 80);
    expect(tooWide(at80)).toEqual([]);
    expect(at80).toContain('2026-11-02');
    const at60 = historyTable(record, 'daily', 60);
    expect(tooWide(at60, 60)).toEqual([]);
    expect(at60.replace(/\s+/g, ' ')).toContain('left out'); // the note may wrap
  });
});
