/**
 * What the reliability test files share, set up by their hooks: a temporary folder of
 * the file's own, a private key file, ghz when the file drives load, `jwt-grpc serve`
 * started with them on the transport asked for, and cleanup (every process a test started, workers and ghz
 * included, is killed after the test; the folder and the keys go after the last one).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { runGhz } from '../../bench/ghz/ghz-run.js';
import { type CliServer, serveArgs, startCli } from '../../bench/kit/cli.js';
import { allowedCpus, planCores } from '../../bench/harness/cores.js';
import { type KeysFile, writeKeysFile } from '../../bench/harness/keys-file.js';
import { killAll } from '../../bench/kit/launcher.js';
import { GO_TOOLS, requireGoTool } from '../../bench/kit/tools.js';
import type { BenchAlgorithm } from '../../bench/options/algorithms.js';
import { LOAD_REQUEST } from '../../bench/soak/load-cell.js';
import type { Transport } from '../../src/lib/index.js';
import { transportArgs } from '../../bench/kit/jwt-servers.js';
import type { GhzReportWithDetails } from './ghz.js';

export interface FixtureOptions {
  /** Algorithms of the generated key file (default none: no key file; a test may write its own into `dir`). */
  readonly algorithms?: readonly BenchAlgorithm[];
  /** Whether the file drives load with ghz (looked up before its first test; `npm run tools` installs it). */
  readonly ghz?: boolean;
  /** The transport `serve` runs on (`--transport`). Default: the CLI's own default. */
  readonly transport?: Transport;
}

export interface ServeOptions {
  /** NODEMAXPROCS. */
  readonly workers: number;
  readonly graceMs: number;
  /** Default: the fixture's key file. */
  readonly keysFile?: string;
  /** More flags of `serve` (e.g. `--watch-keys`, `--metrics-port 0`). */
  readonly args?: readonly string[];
}

export interface LoadOptions {
  readonly port: number;
  readonly connections: number;
  readonly concurrency: number;
  readonly durationS: number;
  /** Names the report file in `dir`. */
  readonly name: string;
}

export interface ReliabilityFixture {
  readonly dir: string;
  readonly keysFile: string;
  readonly ghz: string;
  /** `jwt-grpc serve` on 127.0.0.1, on the fixture's transport, resolved once its banner is out. */
  serve(options: ServeOptions): Promise<CliServer>;
  /**
   * ghz GenerateJwt HS256, `--duration-stop=wait`, through the harness' runGhz; not pinned:
   * a cluster's workers and ghz share the machine's CPUs.
   */
  load(options: LoadOptions): Promise<GhzReportWithDetails>;
}

/** Registers the hooks of a reliability test file (call it inside its `describe`). */
export function reliabilityFixture(name: string, options: FixtureOptions = {}): ReliabilityFixture {
  let dir: string | undefined;
  let keys: KeysFile | undefined;
  let ghz: string | undefined;
  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`reliability fixture: no ${what} (not asked for, or used before beforeAll)`);
    return value;
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), `jwt-grpc-reliability-${name}-`));
    if (options.algorithms !== undefined) keys = writeKeysFile(options.algorithms);
    if (options.ghz === true) ghz = requireGoTool(GO_TOOLS.ghz);
  });

  afterEach(() => killAll());

  afterAll(async () => {
    await killAll();
    keys?.remove();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const fixture: ReliabilityFixture = {
    get dir() {
      return ready(dir, 'folder');
    },
    get keysFile() {
      return ready(keys, 'key file').path;
    },
    get ghz() {
      return ready(ghz, 'ghz');
    },
    serve: ({ workers, graceMs, keysFile = fixture.keysFile, args = [] }) =>
      startCli(
        serveArgs(
          ...(options.transport === undefined ? [] : transportArgs(options.transport)),
          '--keys',
          keysFile,
          '--grace-ms',
          String(graceMs),
          ...args,
        ),
        { env: { NODEMAXPROCS: String(workers) } },
      ),
    async load({ port, connections, concurrency, durationS, name: runName }) {
      const cpus = allowedCpus();
      const call = {
        method: 'GenerateJwt',
        data: LOAD_REQUEST,
        connections,
        concurrency,
        durationS,
        cpus: cpus.length,
        port,
        output: join(fixture.dir, `${runName}.json`),
        name: runName,
      } as const;
      const run = await runGhz(fixture.ghz, call, planCores(null, cpus, false), cpus);
      return run.report as unknown as GhzReportWithDetails;
    },
  };
  return fixture;
}
