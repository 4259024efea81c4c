#!/usr/bin/env node
// Build step: bundles the two gpt-tokenizer encodings svc counts with
// (o200k_base, cl100k_base) into dist/vendor, so the installed package needs
// neither gpt-tokenizer (55 MB installed: every encoding in three module
// formats, with source maps) nor a bundler at run time. `src/engine/tokens.ts`
// imports them as `#tokenizer/o200k` and `#tokenizer/cl100k` (package.json
// "imports"): the bundles by default, gpt-tokenizer itself under the
// `svc-source` condition that the type checker and the tests use.
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { build } from 'rolldown';

const root = resolve(import.meta.dirname, '..');
const out = join(root, 'dist/vendor');
mkdirSync(out, { recursive: true });

const bundles = [
  { input: 'gpt-tokenizer/encoding/o200k_base', file: 'o200k_base.js', format: 'esm' },
  { input: 'gpt-tokenizer/encoding/cl100k_base', file: 'cl100k_base.cjs', format: 'cjs' },
];
for (const { input, file, format } of bundles) {
  await build({
    input,
    cwd: root,
    platform: 'node',
    logLevel: 'warn',
    output: { file: join(out, file), format, exports: 'named', minify: true, sourcemap: false },
  });
}
// The bundles carry gpt-tokenizer's code and tables: its licence goes with them.
const pkg = createRequire(import.meta.url).resolve('gpt-tokenizer/package.json');
copyFileSync(join(dirname(pkg), 'LICENSE'), join(out, 'gpt-tokenizer.LICENSE'));
