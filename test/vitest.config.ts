import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

// Every test runs with a pinned zone so nothing depends on the machine's TZ.
process.env.TZ = 'UTC';

export default defineConfig({
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
  },
});
