import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readCodexProviders } from '../../src/agents/paths.js';
import { codexConfig, unifiedDiff } from '../../src/agents/setup.js';
import { runCli } from '../cli/helpers.js';

describe('svc setup', () => {
  let home: string;
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it('claude: prints the diff, writes only with --write (keeping the rest and a backup), then doctor agrees', async () => {
    home = mkdtempSync(join(tmpdir(), 'svc-setup-'));
    const settings = join(home, '.claude', 'settings.json');
    mkdirSync(join(home, '.claude'));
    const original = '{\n  // my settings\n  "model": "opus",\n  "env": { "FOO": "1" }\n}\n';
    writeFileSync(settings, original);
    const dry = await runCli(['setup', 'claude', '--url', 'http://127.0.0.1:9123'], home);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`--- ${settings}`);
    expect(dry.stdout).toMatch(/^\+.*"ANTHROPIC_BASE_URL": "http:\/\/127\.0\.0\.1:9123"/m);
    expect(dry.stdout).toContain('Not written');
    expect(readFileSync(settings, 'utf8')).toBe(original);

    const wet = await runCli(['setup', 'claude', '--url', 'http://127.0.0.1:9123', '--write'], home);
    expect(wet.code, wet.stderr).toBe(0);
    const written = readFileSync(settings, 'utf8');
    expect(written).toContain('// my settings');
    expect(written).toContain('"model": "opus"');
    expect(written).toContain('"FOO": "1"');
    expect(written).toContain('"ANTHROPIC_BASE_URL": "http://127.0.0.1:9123"');
    expect(readFileSync(`${settings}.svc-backup`, 'utf8')).toBe(original);

    const again = await runCli(['setup', 'claude', '--url', 'http://127.0.0.1:9123'], home);
    expect(again.stdout).toContain('nothing to change');

    const doctor = await runCli(
      [
        'doctor',
        '--json',
        '--url',
        'http://127.0.0.1:9123',
        '--messages-api-url',
        'http://127.0.0.1:9/v1',
        '--compat-api-url',
        'http://127.0.0.1:9/v1',
      ],
      home,
    );
    const report = JSON.parse(doctor.stdout) as { checks: Array<{ name: string; status: string }> };
    expect(report.checks.find((c) => c.name === 'claude code')?.status).toBe('ok');
  }, 60_000);

  it('codex: a provider entry with wire_api = "responses", selected, the rest of config.toml kept', async () => {
    home = mkdtempSync(join(tmpdir(), 'svc-setup-'));
    mkdirSync(join(home, '.codex'));
    const path = join(home, '.codex', 'config.toml');
    writeFileSync(path, 'model = "gpt-5"\nmodel_provider = "openai"\n\n[profiles.fast]\nmodel = "o4-mini"\n');
    const run = await runCli(['setup', 'codex', '--write', '--url', 'http://127.0.0.1:9124'], home);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^-model_provider = "openai"$/m);
    expect(run.stdout).toMatch(/^\+model_provider = "svc"$/m);
    const text = readFileSync(path, 'utf8');
    const read = readCodexProviders(text);
    expect(read.modelProvider).toBe('svc');
    expect(read.providers.svc).toEqual({ base_url: 'http://127.0.0.1:9124/v1', wire_api: 'responses' });
    expect(text).toContain('[profiles.fast]\nmodel = "o4-mini"');
    // Run again with another address: the table is replaced, not repeated.
    const text2 = codexConfig(text, 'http://127.0.0.1:9999', {});
    expect(text2.match(/\[model_providers\.svc\]/g)).toHaveLength(1);
    expect(readCodexProviders(text2).providers.svc?.base_url).toBe('http://127.0.0.1:9999/v1');
  }, 30_000);

  it('unifiedDiff: hunks with context, nothing for equal texts', () => {
    expect(unifiedDiff('a\nb\n', 'a\nb\n', 'x', 'y')).toBe('');
    const d = unifiedDiff('1\n2\n3\n4\n5\n6\n7\n8\n', '1\n2\n3\nfour\n5\n6\n7\n8\n', 'x', 'y');
    expect(d).toBe('--- x\n+++ y\n@@ -2,5 +2,5 @@\n 2\n 3\n-4\n+four\n 5\n 6\n');
  });
});
