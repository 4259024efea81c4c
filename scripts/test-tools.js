#!/usr/bin/env node
// `npm test` runs this first (pretest): the Redis and dashboard tests start
// Debian's redis-server and chromium, and every test must run, none skipped
// for a missing tool. When one is missing and this process may install
// Debian packages (root, apt-get present, SVC_TEST_NO_INSTALL unset), it
// installs them; otherwise it stops with one line naming what to install.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';

const TOOLS = [
  { command: 'redis-server', pkg: 'redis-server', why: 'the Redis store tests' },
  { command: 'chromium', pkg: 'chromium', why: 'the dashboard browser tests' },
];

function onPath(command) {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

// The quality gate (test/quality/eval-gate.test.ts) runs ../shared/eval's scorer: its dependencies
// are installed here, before the tests, which may reach loopback only.
const evalDir = resolve(import.meta.dirname, '../../shared/eval');
if (existsSync(join(evalDir, 'package-lock.json')) && !existsSync(join(evalDir, 'node_modules'))) {
  console.error('npm test: installing the dependencies of ../shared/eval (the quality gate scores with it)');
  const run = spawnSync('npm', ['ci', '--prefix', evalDir, '--no-audit', '--no-fund'], { stdio: 'inherit' });
  if (run.status !== 0) {
    console.error(`npm test: npm ci --prefix ../shared/eval failed (exit ${run.status}).`);
    process.exit(1);
  }
}

const missing = TOOLS.filter((t) => !onPath(t.command));
if (missing.length === 0) process.exit(0);

const pkgs = missing.map((t) => t.pkg);
const mayInstall =
  process.platform === 'linux' &&
  process.getuid?.() === 0 &&
  onPath('apt-get') &&
  !process.env.SVC_TEST_NO_INSTALL;

if (!mayInstall) {
  const what = missing.map((t) => `${t.command} (${t.why})`).join(' and ');
  console.error(
    `npm test needs ${what}: install ${pkgs.join(' ')} (Debian/Ubuntu: sudo apt-get install ${pkgs.join(' ')}), then run npm test again.`,
  );
  process.exit(1);
}

console.error(
  `npm test: installing Debian's ${pkgs.join(' ')} for ${missing.map((t) => t.why).join(' and ')}`,
);
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
for (const args of [
  ['update', '-qq'],
  ['install', '-y', '-qq', '--no-install-recommends', ...pkgs],
]) {
  const run = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env });
  if (run.status !== 0) {
    console.error(
      `npm test: apt-get ${args[0]} failed (exit ${run.status}); install ${pkgs.join(' ')} by hand.`,
    );
    process.exit(1);
  }
}
const still = missing.filter((t) => !onPath(t.command));
if (still.length > 0) {
  console.error(
    `npm test: ${still.map((t) => t.command).join(' and ')} still not on PATH after the install.`,
  );
  process.exit(1);
}
