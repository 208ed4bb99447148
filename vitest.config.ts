import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Two files at a time on this 2-core machine (Vitest's default is cores - 1 = one): 814 s
    // against 1,096 s one at a time, measured 2026-12-07. Three at a time gained little more
    // (the suite is CPU-bound), and the flakes two at a time surfaced were fixed first
    // (process-tree.ts's mid-exec environment read, the getting-started example's EPIPE).
    maxWorkers: 2,
  },
});
