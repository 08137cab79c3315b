import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Server, cluster and CLI tests bind real loopback ports and spawn processes:
    // generous timeouts, and files run in parallel only as far as 2 cores allow.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
