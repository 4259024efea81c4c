#!/usr/bin/env node
// Build step, after tsc: bundles what the installed package would otherwise
// carry as large dependency trees for a small part of their code.
// - the two gpt-tokenizer encodings svc counts with (o200k_base, cl100k_base)
//   into dist/vendor: gpt-tokenizer installs 55 MB (every encoding in three
//   module formats, with source maps). `src/engine/tokens.ts` imports them as
//   `#tokenizer/o200k` and `#tokenizer/cl100k` (package.json "imports"): the
//   bundles by default, gpt-tokenizer itself under the `svc-source` condition
//   that the type checker and the tests use.
// - dist/src/mcp/sdk.js (the MCP SDK's server and zod, for `svc mcp`), in
//   place: about 17 MB of packages become one file.
import { copyFileSync, mkdirSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'rolldown';

const root = resolve(import.meta.dirname, '..');
const vendor = join(root, 'dist/vendor');
mkdirSync(vendor, { recursive: true });

async function bundle(input, file, format) {
  await build({
    input,
    cwd: root,
    platform: 'node',
    logLevel: 'warn',
    output: { file, format, exports: 'named', minify: true, sourcemap: false },
  });
}

await bundle('gpt-tokenizer/encoding/o200k_base', join(vendor, 'o200k_base.js'), 'esm');
await bundle('gpt-tokenizer/encoding/cl100k_base', join(vendor, 'cl100k_base.cjs'), 'cjs');

const sdk = join(root, 'dist/src/mcp/sdk.js');
await bundle(sdk, `${sdk}.bundle`, 'esm');
renameSync(`${sdk}.bundle`, sdk);

// The bundles carry these packages' code: their licences go with them.
for (const pkg of ['gpt-tokenizer', '@modelcontextprotocol/server', 'zod']) {
  const dir = join(root, 'node_modules', pkg);
  copyFileSync(join(dir, 'LICENSE'), join(vendor, `${pkg.replace('/', '__')}.LICENSE`));
}
