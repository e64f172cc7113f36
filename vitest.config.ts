import { defineConfig } from 'vitest/config';
import { SCRAPE_TARGETS_SWITCH } from './stack/scrape-targets.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    // Integration tests share one real stack on a 2-core machine: run files one at a time.
    fileParallelism: false,
    // The programs the tests start run compiled (dist/): built from the sources first.
    globalSetup: ['test/support/compiled-programs.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    // The programs the tests start are not the stack's: they do not announce themselves to its
    // Prometheus (stack/scrape-targets.ts), where a killed one would raise ConsumerDown for others.
    env: { [SCRAPE_TARGETS_SWITCH]: 'no' },
  },
});
