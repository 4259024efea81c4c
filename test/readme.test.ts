import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OPTIONS } from '../src/config/options.js';

const readme = readFileSync('README.md', 'utf8');

describe('README stays true', () => {
  it('its option table is the one generated from src/config/options.ts', () => {
    // throws (exit 1) when the table is out of date
    execFileSync(process.execPath, ['scripts/readme-options.js', '--check'], { encoding: 'utf8' });
  });

  it('names every flag and environment variable', () => {
    for (const o of OPTIONS) {
      if (o.env) expect(readme, o.env).toContain(o.env);
      if (o.flag)
        expect(readme, o.flag).toContain(
          `--${o.kind === 'boolean' && o.default === true ? 'no-' : ''}${o.flag}`,
        );
    }
  });

  it('describes every command', () => {
    for (const file of readdirSync('commands')) {
      const name = file.replace(/\.ts$/, '');
      expect(readme, name).toContain(`### \`svc ${name}`);
    }
  });

  it('opens with the install-and-compress command and the test command', () => {
    const firstBlock = readme.slice(
      readme.indexOf('```sh'),
      readme.indexOf('```', readme.indexOf('```sh') + 5),
    );
    expect(firstBlock).toContain('npm ci && ./bin/run.js compress fixtures/samples/agent-session.json');
    expect(firstBlock).toContain('npm test');
    // CI runs exactly those commands and nothing more (set -e and cd aside).
    const commands = (text: string) =>
      text
        .split('\n')
        .map((line) => line.replace(/\s+#.*$/, '').trim())
        .filter((line) => line && !line.startsWith('#') && !line.startsWith('```'));
    const ci = commands(readFileSync('.ci/run', 'utf8')).filter(
      (line) => !/^set -|^cd "\$\(dirname/.test(line),
    );
    expect(ci).toEqual(commands(firstBlock));
  });
});
