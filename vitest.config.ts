import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Test files that drive the server with programs nobody here wrote (h2spec, grpcurl, the
 * grpc-go interop client, grpcio, go-oidc, PyJWT, a headless chromium), build them, pack the package and
 * install it from the npm registry, or start clusters and CLI processes by the dozen:
 * the `integration` project. They take minutes on 2 cores, mostly waiting on processes.
 */
const INTEGRATION = [
  'test/bench/report-browser.test.ts',
  'test/bench/rust-peer.test.ts',
  'test/cli/cli.test.ts',
  'test/cli/degenerate-keys.test.ts',
  'test/cli/policy-cli.test.ts',
  'test/cli/policy-reload.test.ts',
  'test/cli/token-verify.test.ts',
  'test/cluster/cluster.test.ts',
  'test/deploy/manifests.test.ts',
  'test/docs/commands.test.ts',
  'test/discovery/cluster.test.ts',
  'test/discovery/http.test.ts',
  'test/revocation/status-list-cluster.test.ts',
  'test/ops/keys-cli.test.ts',
  'test/keys/key-backend.test.ts',
  'test/keys/kms.test.ts',
  'test/keys/pkcs11.test.ts',
  'test/ops/watch.test.ts',
  'test/reliability/crash-loop.test.ts',
  'test/reliability/secrets.test.ts',
  'test/revocation/redis-cli.test.ts',
  'test/revocation/redis-store.test.ts',
  'test/tracing/collector-down.test.ts',
  'test/tracing/span-queue.test.ts',
  'test/tracing/otlp-e2e.test.ts',
  'test/discovery/foreign-verifiers.test.ts',
  'test/jwt-service/policy-peers.test.ts',
  'test/package/pack.test.ts',
  'test/package/peer-grpc-js.test.ts',
  'test/reflection/grpcurl.test.ts',
  'test/revocation/cluster.test.ts',
  'test/transport/grpcio.test.ts',
  'test/transport/h2spec.test.ts',
  'test/transport/interop.test.ts',
  'test/transport/zero-window.test.ts',
  // Three `jwt-grpc serve` processes with 600 open files flooded with silent sockets, and
  // some twenty servers each waited on for its handshake deadline: half a minute, mostly
  // waiting, which in `unit` held one of its two workers idle for a third of its run.
  'test/server/handshake.test.ts',
  // `jwt-grpc serve` started again and again (optional-deps, secret-files, v8-flags: a
  // restart in place), clusters (metrics) and TypeDoc over the whole API (api-reference):
  // 4 to 7 s each, the slowest of what was left in `unit`, which must stay within 60 s.
  'test/cli/optional-deps.test.ts',
  'test/cli/secret-files.test.ts',
  'test/cli/v8-flags.test.ts',
  'test/ops/metrics.test.ts',
  'test/package/api-reference.test.ts',
  // Load runs that assert outcomes only (every call OK, no connection left, a reload seen by
  // every worker, counts that match), with no bound on rate or CPU: another file beside them
  // slows them and changes nothing they check, and they spend much of their time waiting
  // (the smoke bench on server starts, load-generators on `go test`, rotation on its keys'
  // TTL; rotation's one time check, its steps inside ghz's 30 s, takes about 15 s of them).
  'test/bench/load-generators.test.ts',
  'test/bench/smoke.test.ts',
  'test/discovery/load.test.ts',
  'test/ops/reload.test.ts',
  'test/ops/rotation.test.ts',
  'test/reliability/disconnect.test.ts',
];

/**
 * Test files whose load run holds a bound that another file beside it could break: the `load`
 * project, one file at a time. RSS levelling off with the server and ghz pinned to their own
 * cores (reliability/load), a worker replaced within 1 s (worker-kill), exit within the
 * grace period (sigterm), nginx's balance and step timing (deploy/nginx), every worker
 * taking its share of connections opened at once (accept-rate). `npm test` runs all
 * three projects; `npm run test:unit` runs `unit` alone, the quick run while developing.
 */
const LOAD_RUNS = [
  'test/bench/accept-rate.test.ts',
  'test/deploy/nginx.test.ts',
  'test/reliability/load.test.ts',
  'test/reliability/sigterm.test.ts',
  'test/reliability/worker-kill.test.ts',
];

/**
 * How many files of a project run at once. `unit` files are short and mostly CPU: one per
 * CPU. `integration` files mostly wait on the processes they start, so two share 2 cores
 * well; more would start clusters by the dozen at once. `load` files measure a server
 * under load pinned to its own core: one at a time, after the others (`groupOrder`), so
 * that nothing else runs beside them.
 */
const WORKERS = { unit: Math.max(2, availableParallelism()), integration: 2, load: 1 } as const;

export default defineConfig({
  test: {
    // Server, cluster and CLI tests bind real loopback ports and spawn processes: generous timeouts.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Fails a file that leaves a process running after its last hook (test/helpers/leftovers.ts).
    setupFiles: ['test/helpers/leftover-check.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...INTEGRATION, ...LOAD_RUNS],
          maxWorkers: WORKERS.unit,
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'integration', include: INTEGRATION, maxWorkers: WORKERS.integration, sequence: { groupOrder: 1 } } },
      { extends: true, test: { name: 'load', include: LOAD_RUNS, maxWorkers: WORKERS.load, sequence: { groupOrder: 2 } } },
    ],
  },
});
