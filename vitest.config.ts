import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// `svc-source`: package.json "imports" resolve to gpt-tokenizer itself rather
// than the bundles the build writes to dist/vendor, so tests of src/ need no
// build. Vite's resolver (added to its defaults, less `module`: with it,
// @opentelemetry/api under `ai` resolves to a build only bundlers can load)
// and Node's own (externalized packages, createRequire in the workers) both
// get the condition.
export default defineConfig({
  ssr: { resolve: { conditions: ['svc-source', ...defaultServerConditions.filter((c) => c !== 'module')] } },
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx', 'src/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    execArgv: ['--conditions=svc-source'],
    setupFiles: ['test/setup/loopback-only.ts'],
    allowOnly: false,
    reporters: ['default', './test/setup/plain-summary-reporter.ts'],
  },
});
