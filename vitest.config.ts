import { defineConfig } from 'vitest/config';

// Every test runs with a pinned zone so nothing depends on the machine's TZ.
process.env.TZ = 'UTC';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
