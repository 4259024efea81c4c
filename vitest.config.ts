import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx', 'src/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    setupFiles: ['test/setup/loopback-only.ts'],
    allowOnly: false,
    reporters: ['default', './test/setup/plain-summary-reporter.ts'],
  },
});
