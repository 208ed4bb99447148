import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Vitest's default on 2 cores is one worker (cores - 1), and most files wait on sockets, child
    // processes and timers: three files at a time took the suite from ~1,450 s to ~1,020 s here.
    maxWorkers: 3,
  },
});
