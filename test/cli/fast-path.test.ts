import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { Config, Parser } from '@oclif/core';
import { describe, expect, it } from 'vitest';
import { parseCompressArgs, parseServeFlags } from '../../src/cli/fast-path.js';
import { configFlags } from '../../src/config/index.js';
import { ROOT } from './helpers.js';

/** What oclif makes of `svc serve ARGV` (its flags, or undefined when it rejects them). */
async function oclifFlags(argv: string[]): Promise<Record<string, unknown> | undefined> {
  try {
    const { flags } = await Parser.parse(argv, { flags: configFlags('serve'), strict: true });
    return flags;
  } catch {
    return undefined;
  }
}

describe('start-up fast path of bin/run.js', () => {
  it('parses plain serve flags exactly as oclif does', async () => {
    const cases = [
      [],
      ['--port', '0'],
      ['--port=9000', '--host', '0.0.0.0'],
      ['--no-cache', '--no-rate-limit', '--no-telemetry', '--no-optimize'],
      ['--optimize', '--lossless', '--mlcompress'],
      ['--log-level', 'debug', '--api-key', 'k1', '--api-key=k2'],
      ['--messages-api-url', 'http://127.0.0.1:1/v1', '--compat-api-url=http://127.0.0.1:2/v1'],
      ['--engine-timeout', '0', '--store-prefix', 'x:'],
    ];
    for (const argv of cases) {
      const ours = parseServeFlags(argv);
      expect(ours, argv.join(' ')).toBeDefined();
      expect(ours, argv.join(' ')).toEqual(await oclifFlags(argv));
    }
  });

  it('leaves to oclif whatever is not plain flags (help, unknown or repeated flags, bad choices)', () => {
    for (const argv of [
      ['--help'],
      ['-h'],
      ['--bogus'],
      ['extra'],
      ['--port'],
      ['--port', '1', '--port', '2'],
      ['--log-level', 'loud'],
      ['--no-lossless'],
      ['--cache=false'],
      ['--no-cache', '--no-cache'],
      ['--budget', '-1'],
      ['--'],
    ])
      expect(parseServeFlags(argv), argv.join(' ')).toBeUndefined();
  });

  it('prints the version line oclif prints', async () => {
    // what oclif prints for --version (src/cli/version-line.cts is CommonJS: run here through bin/run.js)
    const fast = (await Config.load(ROOT)).userAgent;
    expect(fast).toMatch(/^svc-proxy\/\d+\.\d+\.\d+ \S+-\S+ node-v\d+/);
    const run = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, [join(ROOT, 'bin/run.js'), '--version'], (err, stdout) =>
        err ? reject(err) : resolve(stdout),
      ),
    );
    expect(run.trim()).toBe(fast);
  });
});

describe('start-up fast path of svc compress', () => {
  it('knows every flag the command declares, and parses plain arguments exactly as oclif does', async () => {
    const { default: Compress } = await import('../../commands/compress.js');
    const ours = parseCompressArgs([]);
    expect(ours).toBeDefined();
    for (const [name, flag] of Object.entries(Compress.flags)) {
      const f = flag as { type: string; allowNo?: boolean; char?: string };
      const argv = f.type === 'boolean' ? [`--${name}`] : [`--${name}`, 'v'];
      // a declared flag must be known to the fast path (an unknown one would fall back to oclif)
      if (!(f.type === 'option' && (flag as { options?: string[] }).options))
        expect(parseCompressArgs(argv), name).toBeDefined();
    }
    const cases = [
      [],
      ['fixtures/samples/agent-session.json'],
      ['a.json', 'b.json', '--summary', '--no-record'],
      ['-', '--model', 'gpt-4.1', '--pretty', '--messages-only'],
      ['--input-format', 'messages', '--fail-under=30', 'dir', '--output', 'out.json'],
      ['--lossless', '--no-intelligent-context', 'x.json'],
    ];
    for (const argv of cases) {
      const parsed = parseCompressArgs(argv);
      expect(parsed, argv.join(' ')).toBeDefined();
      const oclif = await Parser.parse(argv, {
        flags: Compress.flags,
        args: Compress.args,
        strict: false,
      });
      expect(parsed!.flags, argv.join(' ')).toEqual(oclif.flags);
      expect(parsed!.args, argv.join(' ')).toEqual(oclif.argv);
    }
    for (const argv of [['-o', 'x'], ['--input-format', 'yaml'], ['--help'], ['--record=false']])
      expect(parseCompressArgs(argv), argv.join(' ')).toBeUndefined();
  });
});
