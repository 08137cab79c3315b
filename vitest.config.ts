import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import type { CoverageOptions } from 'vitest/node';

/**
 * The projects, chosen by file name, so that a new file lands where its name says with no
 * list to edit (test/house/test-projects.test.ts holds that each file is in exactly one):
 *
 * - `*.integration.test.ts`, the `integration` project: files that drive the server with
 *   programs nobody here wrote (h2spec, grpcurl, the grpc-go interop client, grpcio, go-oidc,
 *   PyJWT, a headless chromium), build them, pack the package and install it from the npm
 *   registry, or start clusters and CLI processes by the dozen. They take minutes on 2 cores,
 *   mostly waiting on processes. Also here: files of a few seconds each that would hold one of
 *   `unit`'s two workers idle (server/handshake: three `jwt-grpc serve` with 600 open files
 *   flooded with silent sockets and some twenty handshake deadlines waited on, half a minute;
 *   cli/optional-deps, cli/secret-files, cli/v8-flags: `jwt-grpc serve` started again and
 *   again; ops/metrics: clusters; package/api-reference: TypeDoc over the whole API), since
 *   `unit` must stay within 60 s; and load runs that assert outcomes only (every call OK, no
 *   connection left, a reload seen by every worker, counts that match), with no bound on rate
 *   or CPU, which another file beside them slows without changing what they check
 *   (bench/smoke, bench/load-generators, discovery/load, ops/reload, ops/rotation,
 *   reliability/disconnect). Files that change the test process itself (a module resolution
 *   hook that hides a package: revocation/redis-missing, tracing/sdk-missing) are here too:
 *   a `unit` file runs in a VM context of a shared process (below), where such a hook would
 *   reach the files after it, or not act at all.
 * - `*.load.test.ts`, the `load` project, one file at a time: load runs that hold a bound
 *   another file beside them could break. RSS levelling off with the server and ghz pinned to
 *   their own cores (reliability/soak), a worker replaced within 1 s (worker-kill), exit within
 *   the grace period (sigterm), nginx's balance and step timing (deploy/nginx), every worker
 *   taking its share of connections opened at once (bench/accept-rate).
 * - every other `test/**\/*.test.ts`, the `unit` project: short, mostly CPU.
 *
 * `npm test` runs all three projects, in two vitest runs (bench/kit/test-run.ts: `unit` under
 * the coverage gate below, then the others); `npm run test:unit` runs `unit` alone, the quick
 * run while developing.
 */
export const PROJECT_FILES = {
  integration: 'test/**/*.integration.test.ts',
  load: 'test/**/*.load.test.ts',
  all: 'test/**/*.test.ts',
} as const;

/**
 * How many files of a project run at once. `unit` files are short, mostly CPU, part of the
 * time waiting on a loopback server or a timer: one more than the CPUs keeps the CPUs busy
 * while one file waits. `integration` files mostly wait on the processes they start (handshake
 * deadlines, h2spec's timeouts, npm installs, reloads under load), so three share 2 cores: the
 * project took 204 s with three against about 285 s with two (2 cores, 2026-12-07), and none of
 * its files bounds a rate or CPU time. `load` files measure a
 * server under load pinned to its own core: one at a time, after the others (`groupOrder`),
 * so that nothing else runs beside them.
 */
const WORKERS = { unit: availableParallelism() + 1, integration: 3, load: 1 } as const;

/**
 * `unit` runs each file in a VM context of its own inside a few reused processes
 * (`vmForks`), not in a fresh process per file (`forks`): a file still gets its own globals and
 * its own copy of every module, so none sees another's state, but a process's start and
 * Node's own modules are paid once per worker, not once per file (on 2 cores, about a
 * quarter of the project's time). The other projects start processes and wait on them:
 * they keep `forks`.
 */
const UNIT_POOL = 'vmForks';

/**
 * The coverage gate: `npm test` runs `unit` with `--coverage` and fails below these. It gates
 * `unit` alone, in a vitest run of its own (vitest collects coverage for a whole run): v8
 * coverage sees the code run in the test process, and the `integration` and `load` files
 * mostly run jwt-grpc in child processes (CLI, clusters, workers), whose code it does not see;
 * their coverage would also depend on which external tools a machine has. Each figure is the
 * coverage `unit` measured (Node 24, 2026-12-07) less about two points, so that a change that
 * leaves code unexercised fails here, while the small differences between runs (a retry taken
 * or not, a timer that fired) do not. A folder has its own figures where it differs from the
 * whole: lower where part of it runs only in a child process (cli/main.ts and serve.ts,
 * cluster/primary.ts and worker.ts, the PKCS#11 and KMS backends, the Redis store, the
 * HTTP/1.1 side of the transport: each driven by an `integration` file), higher where `unit` covers nearly all of it. Raise a figure when
 * coverage rises; lower one only with a reason here.
 */
const COVERAGE: CoverageOptions = {
  provider: 'v8',
  include: ['src/**/*.ts'],
  reporter: ['text-summary', 'json-summary'],
  reportOnFailure: true,
  thresholds: {
    lines: 86,
    branches: 79,
    'src/cli/**': { lines: 79, branches: 73 },
    'src/client/**': { lines: 95, branches: 92 },
    'src/cluster/**': { lines: 75, branches: 71 },
    'src/jwt-service/**': { lines: 97, branches: 93 },
    'src/keys/**': { lines: 68, branches: 60 },
    'src/revocation/**': { lines: 78, branches: 71 },
    'src/server/**': { lines: 92, branches: 81 },
    'src/tokens/**': { lines: 97, branches: 93 },
    'src/transport/**': { lines: 86, branches: 78 },
  },
};

export default defineConfig({
  test: {
    // Server, cluster and CLI tests bind real loopback ports and spawn processes: generous timeouts.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Fails a file that leaves a process running after its last hook (bench/kit/leftovers.ts).
    setupFiles: ['test/setup/leftover-check.ts'],
    coverage: COVERAGE,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: [PROJECT_FILES.all],
          exclude: [PROJECT_FILES.integration, PROJECT_FILES.load],
          maxWorkers: WORKERS.unit,
          pool: UNIT_POOL,
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'integration', include: [PROJECT_FILES.integration], maxWorkers: WORKERS.integration, sequence: { groupOrder: 1 } } },
      { extends: true, test: { name: 'load', include: [PROJECT_FILES.load], maxWorkers: WORKERS.load, sequence: { groupOrder: 2 } } },
    ],
  },
});
