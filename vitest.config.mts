import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/quiet-runtime.ts'],
    // Each file starts its own Temporal dev server (and some start whole stacks and a browser):
    // on a 2-core machine running files one after another keeps timings out of the results.
    fileParallelism: false,
    testTimeout: 90_000,
    // expect.poll waits on real processes (a first workflow task on a fresh worker can take seconds).
    expect: { poll: { timeout: 15_000 } },
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
