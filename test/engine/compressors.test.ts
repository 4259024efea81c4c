import { describe, expect, it } from 'vitest';
import { compressCode } from '../../src/engine/compressors/code.js';
import { compressDiff } from '../../src/engine/compressors/diff.js';
import { compressHtml } from '../../src/engine/compressors/html.js';
import { compressJson } from '../../src/engine/compressors/json.js';
import { compressLog } from '../../src/engine/compressors/log.js';
import { compressProse } from '../../src/engine/compressors/prose.js';
import { compressSearch } from '../../src/engine/compressors/search.js';
import { compressTable } from '../../src/engine/compressors/table.js';
import { parseMarkers } from '../../src/engine/markers.js';
import { ctxOf, HASH } from './helpers.js';

const MARKER_TAIL = `retrieve with svc_retrieve hash=${HASH}]`;

function jobsDocument(): string {
  const jobs = [];
  for (let i = 0; i < 60; i++) {
    jobs.push({
      id: `job-${100 + i}`,
      status: i === 17 ? 'failed' : 'ok',
      region: i < 40 ? 'eu' : 'us',
      ms: i === 30 ? 9000 : 100 + (i % 7),
      note: 'nightly batch run',
    });
  }
  return JSON.stringify({ total: 60, jobs }, null, 2);
}

function logText(): string {
  const lines: string[] = [];
  for (let i = 0; i < 60; i++) {
    const s = String(i).padStart(2, '0');
    if (i === 20) {
      lines.push(
        `2025-01-01T10:00:${s}Z ERROR payment-api failed to charge order ord-7731: upstream timeout`,
      );
      lines.push('    at charge (billing.js:42:7)', '    at process (worker.js:10:3)');
    } else if (i === 35) lines.push(`2025-01-01T10:00:${s}Z WARN  cache-7 eviction storm, 812 keys dropped`);
    else lines.push(`2025-01-01T10:00:${s}Z INFO  request GET /health 200 in ${(i % 5) + 1}ms`);
  }
  lines.push('Summary: 1 error, 1 warning, 60 requests', '');
  return lines.join('\n');
}

describe('compressJson', () => {
  it('keeps the first and last item, errors, outliers, change points and user terms; marker after valid JSON', () => {
    const out = compressJson(jobsDocument(), ctxOf({ userTerms: ['job-125'] }));
    expect(out?.lossy).toBe(true);
    expect(out?.text).toBe(
      [
        '{"total":60,"jobs":{"$columns":["id","status","region","ms","note"],"$rows":[["job-100","ok","eu",100,"nightly batch run"],["job-117","failed","eu",103,"nightly batch run"],["job-118","ok","eu",104,"nightly batch run"],["job-125","ok","eu",104,"nightly batch run"],["job-130","ok","eu",9000,"nightly batch run"],["job-159","ok","us",103,"nightly batch run"]]}}',
        '[svc: omitted part mentions: job-101, job-102, job-103, job-104, job-105, job-106, job-107, job-108, job-109, job-110, job-111, job-112, job-113, job-114, job-115, job-116, job-119, job-120, job-121, job-122]',
        `[svc: 54 items omitted (1 error items kept; $.jobs kept 6 of 60); ${MARKER_TAIL}`,
      ].join('\n'),
    );
    expect(() => JSON.parse(out!.text.split('\n')[0]!)).not.toThrow();
  });

  it('is lossless below the small threshold: minified, uniform records in columnar form', () => {
    const rows = [1, 2, 3, 4].map((i) => ({ id: i, name: `n${i}` }));
    const out = compressJson(JSON.stringify(rows, null, 2), ctxOf());
    expect(out).toEqual({
      text: '{"$columns":["id","name"],"$rows":[[1,"n1"],[2,"n2"],[3,"n3"],[4,"n4"]]}',
      lossy: false,
    });
  });

  it('keeps a status line before the JSON and returns null for non-JSON', () => {
    expect(compressJson('HTTP 200\n{ "ok": true }', ctxOf())).toEqual({
      text: 'HTTP 200\n{"ok":true}',
      lossy: false,
    });
    expect(compressJson('not json at all', ctxOf())).toBeNull();
  });

  it('shortens an entity already shown earlier to its identity and changed fields', () => {
    const issue = {
      id: 7,
      url: 'https://api.example.com/issues/7',
      title: 'Bug',
      state: 'open',
      body: 'x'.repeat(1200),
      labels: [],
      locked: false,
      comments: 0,
    };
    const earlier = new Map([['id=7', issue as Record<string, unknown>]]);
    const out = compressJson(
      JSON.stringify({ ...issue, state: 'closed' }),
      ctxOf({ earlierEntities: () => earlier }),
    );
    expect(out?.text).toBe(
      `{"id":7,"url":"https://api.example.com/issues/7","state":"closed","…":"[svc: 5 fields unchanged since shown earlier]"}\n[svc: 5 fields omitted (repeated or unchanged values shortened); ${MARKER_TAIL}`,
    );
  });
});

describe('compressLog', () => {
  it('keeps the edges, the first error with its stack trace and the summary; indexes names it dropped', () => {
    const out = compressLog(logText(), ctxOf());
    expect(out.text).toBe(
      [
        '2025-01-01T10:00:00Z INFO  request GET /health 200 in 1ms',
        '2025-01-01T10:00:01Z INFO  request GET /health 200 in 2ms',
        '[18 lines omitted]',
        '2025-01-01T10:00:20Z ERROR payment-api failed to charge order ord-7731: upstream timeout',
        '    at charge (billing.js:42:7)',
        '    at process (worker.js:10:3)',
        '[39 lines omitted]',
        'Summary: 1 error, 1 warning, 60 requests',
        '',
        '[svc: omitted part mentions: cache-7]',
        `[svc: 57 lines omitted (2 error lines kept); ${MARKER_TAIL}`,
      ].join('\n'),
    );
  });

  it('collapses repeated lines with a count (lossless)', () => {
    const out = compressLog(['start', 'tick', 'tick', 'tick', 'tick', 'end'].join('\n'), ctxOf());
    expect(out).toEqual({ text: 'start\ntick\n[repeated 3 more times]\nend', lossy: false });
  });
});

describe('compressSearch', () => {
  it('keeps matches spread across files, error matches, and the totals', () => {
    const lines = [
      "src/server/app.ts:12:import { retry } from './retry.js';",
      'src/server/app.ts:40:  return retry(() => forward(req), 3);',
      'src/server/app.ts:77:  // retry on 502 only',
      'src/server/app.ts:90:  retry.reset();',
      'src/server/app.ts:120:  retry(cleanup);',
      'src/server/retry.ts:1:export function retry(fn, times) {',
      "src/server/retry.ts:9:  throw new Error('retry failed after ' + times);",
      'src/server/retry.ts:15:retry.reset = () => {};',
      'src/client/index.ts:33:    const res = await retry(send, opts.retries);',
      'src/client/index.ts:58:    return retry(send, 1);',
      'src/client/index.ts:61:    // retry once more',
      'src/client/index.ts:80:    retry.reset();',
      'src/client/index.ts:99:    retry(flush);',
      "src/stats/rollup.ts:5:import { retry } from '../server/retry.js';",
    ];
    for (let i = 44; i <= 64; i++) lines.push(`src/stats/rollup.ts:${i}:  await retry(save, ${i - 39});`);
    const out = compressSearch(`${lines.join('\n')}\n`, ctxOf());
    expect(out.text).toBe(
      [
        "src/server/app.ts:12:import { retry } from './retry.js';",
        'src/server/app.ts:40:  return retry(() => forward(req), 3);',
        '[3 lines omitted]',
        'src/server/retry.ts:1:export function retry(fn, times) {',
        "src/server/retry.ts:9:  throw new Error('retry failed after ' + times);",
        '[1 lines omitted]',
        'src/client/index.ts:33:    const res = await retry(send, opts.retries);',
        '[4 lines omitted]',
        "src/stats/rollup.ts:5:import { retry } from '../server/retry.js';",
        '[22 lines omitted]',
        '[svc: omitted part mentions: retry.reset, src/server/app.ts:77, src/server/app.ts:90, src/server/app.ts:120, src/server/retry.ts:15:retry.reset, src/client/index.ts:58, src/client/index.ts:61]',
        `[svc: 30 lines omitted (35 matches in 4 files); ${MARKER_TAIL}`,
      ].join('\n'),
    );
  });
});

describe('compressDiff', () => {
  it('keeps headers and changed lines with one line of context', () => {
    const lines = [
      'diff --git a/src/app.ts b/src/app.ts',
      'index 1234567..89abcde 100644',
      '--- a/src/app.ts',
      '+++ b/src/app.ts',
    ];
    lines.push('@@ -1,30 +1,30 @@ export function main() {');
    for (let i = 1; i <= 30; i++) {
      if (i === 15) lines.push('-  const timeout = 1000;', '+  const timeout = 5000;');
      else lines.push(`   const line${i} = compute(${i}); // unchanged context line`);
    }
    const out = compressDiff(lines.join('\n'), ctxOf());
    expect(out.text).toBe(
      [
        ...lines.slice(0, 5),
        '[13 lines omitted]',
        '   const line14 = compute(14); // unchanged context line',
        '-  const timeout = 1000;',
        '+  const timeout = 5000;',
        '   const line16 = compute(16); // unchanged context line',
        `[svc: 28 lines omitted (unchanged context); ${MARKER_TAIL}`,
      ]
        .join('\n')
        // the single gap before the change is a short note, the last one carries the full marker
        .replace('[svc: 28 lines omitted', '[14 lines omitted]\n[svc: 27 lines omitted'),
    );
  });
});

describe('compressTable', () => {
  it('keeps the header, first rows, failing rows and the last row', () => {
    const rows = ['NAME                                READY   STATUS             RESTARTS   AGE'];
    for (let i = 0; i < 30; i++) {
      const status = i === 11 ? 'CrashLoopBackOff' : 'Running';
      rows.push(
        `web-7f9c${String(i).padStart(2, '0')}-abcde                     1/1     ${status.padEnd(18)} 0          3d`,
      );
    }
    const out = compressTable(`${rows.join('\n')}\n`, ctxOf());
    const text = out.text.split('\n');
    expect(text.slice(0, 3)).toEqual(rows.slice(0, 3));
    expect(text).toContain(rows[12]);
    expect(text).toContain(rows[30]);
    expect(text).toContain('[9 lines omitted]');
    expect(out.text.endsWith(`[svc: 26 lines omitted (1 error lines kept); ${MARKER_TAIL}`)).toBe(true);
  });
});

describe('compressCode', () => {
  function listing(): string {
    const lines = ["import { readFile } from 'node:fs/promises';", "import { parse } from './parse.js';", ''];
    for (let f = 0; f < 6; f++) {
      lines.push(`export async function loadSection${f}(path: string): Promise<string[]> {`);
      for (let k = 0; k < 8; k++)
        lines.push(`  const part${k} = await readFile(path, 'utf8'); // read the file again for part ${k}`);
      lines.push(`  return parse(part0, ${f});`, '}', '');
    }
    return lines.map((l, i) => `${String(i + 1).padStart(6)}→${l}`).join('\n');
  }

  it('folds a large file to its definitions, unpads line numbers and indexes dropped names', () => {
    const out = compressCode(listing(), ctxOf());
    expect(out.text).toBe(
      [
        "1→import { readFile } from 'node:fs/promises';",
        "2→import { parse } from './parse.js';",
        '3→',
        '4→export async function loadSection0(path: string): Promise<string[]> {',
        "5→  const part0 = await readFile(path, 'utf8'); // read the file again for part 0",
        '[10 lines omitted]',
        '16→export async function loadSection1(path: string): Promise<string[]> {',
        '[11 lines omitted]',
        '28→export async function loadSection2(path: string): Promise<string[]> {',
        '[11 lines omitted]',
        '40→export async function loadSection3(path: string): Promise<string[]> {',
        '[11 lines omitted]',
        '52→export async function loadSection4(path: string): Promise<string[]> {',
        '[11 lines omitted]',
        '64→export async function loadSection5(path: string): Promise<string[]> {',
        '[11 lines omitted]',
        '[svc: omitted part mentions: part1, part2, part3, part4, part5, part6, part7]',
        `[svc: 65 lines omitted (bodies folded); ${MARKER_TAIL}`,
      ].join('\n'),
    );
  });

  it('keeps a small file whole apart from whitespace', () => {
    const out = compressCode('     1→def f(x):   \n     2→    return x\n\n\n\n     3→', ctxOf());
    expect(out).toEqual({ text: '1→def f(x):\n2→    return x\n\n3→', lossy: false });
  });

  it('replaces a run of lines shown earlier in the conversation by a note (short trailing lines stay)', () => {
    const body = [
      'function total(items) {',
      '  let sum = 0;',
      '  for (const item of items) sum += item.price;',
      '  return sum;',
      '}',
    ];
    const out = compressCode(
      ['// cart.js, read again', ...body, 'export default total;'].join('\n'),
      ctxOf({ earlierLines: () => new Set(body.map((l) => l.trim())) }),
    );
    expect(out).toEqual({
      text: `// cart.js, read again\n[svc: 4 lines omitted (shown earlier in the conversation); ${MARKER_TAIL}\n}\nexport default total;`,
      lossy: true,
    });
  });
});

describe('compressHtml and compressProse', () => {
  it('strips markup, keeps every word and link address', () => {
    const page =
      '<!DOCTYPE html>\n<html><head><title>Status &amp; health</title><style>body{color:red}</style><script>var x=1;</script></head>\n<body><h1>Service status</h1><p>All systems <b>operational</b>.</p><ul><li>API: up</li><li>DB: up</li></ul><a href="https://status.example.com/history">History</a><!-- build 42 --></body></html>\n';
    const out = compressHtml(page, ctxOf());
    expect(out.text).toBe(
      [
        'Status & health',
        '',
        'Service status',
        '',
        'All systems operational.',
        '',
        'API: up',
        '',
        'DB: up',
        '',
        'History (https://status.example.com/history)',
        `[svc: 200 chars omitted (HTML markup); ${MARKER_TAIL}`,
      ].join('\n'),
    );
  });

  it('prose only loses redundant whitespace and repeats', () => {
    const out = compressProse(
      'The deploy finished.   Two   services restarted.\n\n\n\nAll checks passed.   \nAll checks passed.\nAll checks passed.\nAll checks passed.\n',
      ctxOf(),
    );
    expect(out).toEqual({
      text: 'The deploy finished. Two services restarted.\n\nAll checks passed.\n[repeated 3 more times]\n',
      lossy: false,
    });
  });
});

describe('markers', () => {
  it('every full marker names the hash and parses back', () => {
    const out = compressLog(logText(), ctxOf());
    expect(parseMarkers(out.text)).toEqual([
      { hash: HASH, omitted: 57, unit: 'lines', note: '2 error lines kept' },
    ]);
  });
});
