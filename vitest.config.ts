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
    // Each fork keeps its module cache from one file to the next: the same files in a quarter less
    // CPU (test/data: 47.6 s → 34.2 s user, measured 2026-12-07). A helper module is then evaluated
    // once per fork, so none registers hooks or keeps per-file state at import: their cleanups are
    // registered with test/support/file-hooks.ts and run by the hooks of test/support/setup.ts (a
    // setup file, evaluated again for every file), and a check that belongs to some files only is a
    // function those files call (test/actors/placement/support.ts's checkPlacementLeaks).
    isolate: false,
  },
});
