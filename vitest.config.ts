import { defineConfig } from 'vitest/config';

/**
 * Test files that start a load run (the benchmark in its smoke profile, ghz driving a
 * server for seconds, or rounds of hundreds of clients). `npm test` runs them with the rest; `npm run test:unit` (the
 * `unit` project) leaves them out, for a quick run while developing.
 */
const LOAD_RUNS = [
  'test/bench/smoke.test.ts',
  'test/deploy/nginx.test.ts',
  'test/discovery/load.test.ts',
  'test/ops/reload.test.ts',
  'test/ops/rotation.test.ts',
  'test/reliability/disconnect.test.ts',
  'test/reliability/load.test.ts',
  'test/reliability/secrets.test.ts',
  'test/reliability/sigterm.test.ts',
  'test/reliability/worker-kill.test.ts',
];

export default defineConfig({
  test: {
    // Server, cluster and CLI tests bind real loopback ports and spawn processes:
    // generous timeouts, and files run in parallel only as far as 2 cores allow.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: LOAD_RUNS } },
      { extends: true, test: { name: 'load', include: LOAD_RUNS } },
    ],
  },
});
