/**
 * The load sections of `npm run bench` (options `--h2load`, `--open-loop`,
 * `--warmup-sweep`; see bench/README.md "Load generators, open loop, warm-up"): jwt-grpc
 * and the Go peer on the 1-core split, each section starting its servers afresh.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CorePlan } from '../harness/cores.js';
import { writeKeysFile } from '../harness/keys-file.js';
import { goBuild } from '../kit/go-build.js';
import type { ServerProcess } from '../kit/launcher.js';
import { cargoBuild } from '../kit/cargo-build.js';
import { GO_PEER_BINARY, GO_PEER_DIR, RUST_PEER_DIR, VERIFY_ISSUED_NOTE } from '../macro/servers.js';
import type { BenchAlgorithm } from '../options/algorithms.js';
import type { LoadSelection } from '../options/types.js';
import { runH2loadSection } from './h2load-section.js';
import { REST_SERVERS, runRestSection } from './rest-section.js';
import { type LoadContext, LOAD_SERVERS } from './load-servers.js';
import { ABSOLUTE_RPS, FRACTIONS_OF_OWN, buildOpenLoop, runOpenLoopSection } from './open-loop.js';
import type { Capacity, LoadResults, RestSection } from './results.js';
import { WARMUP_CALLS, runWarmupSection } from './warmup.js';
import { runStartupSection } from './startup.js';

export interface LoadOptions {
  readonly selection: LoadSelection;
  readonly ghz: string;
  readonly plan: CorePlan;
  readonly algorithms: readonly BenchAlgorithm[];
  readonly durationS: number;
  readonly warmupS: number;
  readonly rounds: number;
  readonly openLoopRounds: number;
  readonly warmupStarts: number;
  readonly log: (line: string) => void;
  readonly onCleanup: (cleanup: () => void) => () => void;
}

/** Nothing run: every load field of results.json null. */
export const NO_LOAD: LoadResults = {
  h2load: null,
  openLoop: null,
  openLoopRatios: null,
  warmup: null,
  startup: null,
  startupRows: null,
  startupSettings: null,
  loadSettings: null,
};

export async function runLoad(options: LoadOptions): Promise<LoadResults> {
  const { selection } = options;
  // The start-up section runs beside the Go peer, as the other Go sections do.
  const goSections = selection.h2load || selection.openLoop || selection.fixedLoad || selection.warmupSweep || selection.startup;
  if (!goSections && !selection.rest) return NO_LOAD;
  const notes: string[] = [];
  const servers = [...LOAD_SERVERS];
  const algorithms = options.algorithms.filter((a) => a === 'HS256' || a === 'ES256');
  // The REST rows need no Go: a Go peer that does not build costs the others only.
  const rest = selection.rest ? await runRest(options, algorithms, notes) : null;
  if (!goSections) return { ...NO_LOAD, rest, loadSettings: { servers, algorithms, openLoop: null, warmup: null, notes } };
  options.log('building the Go peer (go build in bench/peers/go)');
  const peer = goBuild(GO_PEER_DIR, GO_PEER_BINARY, 'the Go peer');
  if (!peer.ok) {
    notes.push(`load sections not run: ${peer.reason}`);
    return { ...NO_LOAD, rest, loadSettings: { servers, algorithms, openLoop: null, warmup: null, notes } };
  }
  // The load sections run the `jwt-grpc` row of the macro table, with its `--verify-issued`.
  notes.push(VERIFY_ISSUED_NOTE);
  // --fixed-load runs the open-loop section on its fraction-of-Go points alone.
  let openLoop = selection.openLoop || selection.fixedLoad;
  if (openLoop) {
    const reason = buildOpenLoop();
    if (reason !== null) {
      notes.push(`open-loop latency not measured: ${reason}`);
      openLoop = false;
    }
  }
  const { ctx, release } = openLoadContext(options, 'load');
  try {
    // A section that fails is noted and the others still run: one broken server start must not cost the rest.
    const attempt = async <T>(name: string, section: () => Promise<T>): Promise<T | null> => {
      try {
        return await section();
      } catch (error) {
        notes.push(`${name} failed: ${(error as Error).message.split('\n')[0]}`);
        options.log(`  ! ${name} failed: ${(error as Error).message}`);
        return null;
      }
    };
    const h2load = selection.h2load
      ? await attempt('h2load cells', () =>
          runH2loadSection(ctx, { algorithms, servers, durationS: options.durationS, warmupS: options.warmupS, rounds: options.rounds }),
        )
      : null;
    if (h2load?.skipped != null) notes.push(`h2load cells skipped: ${h2load.skipped}`);
    for (const cell of h2load?.cells ?? [])
      if (cell.error !== null) notes.push(`h2load ${cell.server} ${cell.algorithm}: ${cell.error.split('\n')[0]}`);
    // h2load's figure even where h2load itself was the limit: still the highest rate either generator reached.
    const capacities: Capacity[] = (h2load?.cells ?? []).flatMap((c) =>
      c.h2load === null
        ? []
        : [{ server: c.server, algorithm: c.algorithm, requestsPerS: c.h2load.requestsPerS.median, source: 'h2load' as const }],
    );
    const open = openLoop
      ? await attempt('open-loop latency', () =>
          runOpenLoopSection(ctx, {
            algorithms,
            servers,
            durationS: Math.max(options.durationS, 2),
            warmupS: options.warmupS,
            rounds: options.openLoopRounds,
            absoluteRps: selection.openLoop ? ABSOLUTE_RPS : [],
            ownFractions: selection.openLoop ? FRACTIONS_OF_OWN : [],
            capacities,
          }),
        )
      : null;
    const warm = selection.warmupSweep
      ? await attempt('warm-up sweep', () =>
          runWarmupSection(ctx, {
            algorithms,
            servers,
            warmupCalls: WARMUP_CALLS,
            starts: options.warmupStarts,
            durationS: options.durationS,
          }),
        )
      : null;
    const startup = selection.startup ? await attempt('start-up', () => runStartupSection(ctx)) : null;
    return {
      h2load,
      startupRows: startup?.rows ?? null,
      startupSettings: startup?.settings ?? null,
      openLoop: open?.points ?? null,
      openLoopRatios: open?.ratios ?? null,
      warmup: warm?.warmup ?? null,
      startup: warm?.startup ?? null,
      rest,
      loadSettings: { servers, algorithms, openLoop: open?.settings ?? null, warmup: warm?.settings ?? null, notes },
    };
  } finally {
    await release();
  }
}

/**
 * What a section runs in: a keys file and a scratch directory of its own, and the servers it
 * starts; `release` stops them and removes both, and so does the run's cleanup if the
 * process is stopped first.
 */
function openLoadContext(options: LoadOptions, what: string): { ctx: LoadContext; release: () => Promise<void> } {
  const keys = writeKeysFile(['HS256', 'ES256']);
  const scratchDir = mkdtempSync(join(tmpdir(), `jwt-grpc-bench-${what}-`));
  let current: readonly ServerProcess[] = [];
  const remove = (): void => {
    keys.remove();
    rmSync(scratchDir, { recursive: true, force: true });
  };
  const unregister = options.onCleanup(() => {
    for (const server of current) server.stop(2000).catch(() => undefined);
    remove();
  });
  const ctx: LoadContext = {
    plan: options.plan,
    keysFile: keys.path,
    scratchDir,
    ghz: options.ghz,
    log: options.log,
    onServers: (s) => (current = s),
  };
  const release = async (): Promise<void> => {
    unregister();
    await Promise.all(current.map((s) => s.stop(2000)));
    remove();
  };
  return { ctx, release };
}

/**
 * The REST rows in a context of their own (keys, scratch directory, cleanup): the Rust
 * peer is built first (cargo), and left out with the reason where it does not build.
 */
async function runRest(options: LoadOptions, algorithms: readonly string[], notes: string[]): Promise<RestSection | null> {
  options.log('building the Rust peer for the REST rows (cargo build --release --locked in bench/peers/rust)');
  const built = cargoBuild(RUST_PEER_DIR, 'the Rust peer');
  const skipped = new Map<string, string>();
  if (!built.ok) for (const s of REST_SERVERS.filter((x) => x.stack === 'Rust')) skipped.set(s.name, built.reason);
  const { ctx, release } = openLoadContext(options, 'rest');
  try {
    options.log('measuring gRPC against REST (h2load, --h1 for REST)');
    const section = await runRestSection(ctx, {
      algorithms,
      servers: REST_SERVERS.filter((s) => !skipped.has(s.name)),
      skipped,
      durationS: options.durationS,
      warmupS: options.warmupS,
      rounds: options.rounds,
    });
    if (section.skipped !== null) notes.push(`REST rows skipped: ${section.skipped}`);
    for (const s of section.skippedServers) notes.push(`REST rows without ${s.server}: ${s.reason.split('\n')[0]}`);
    for (const cell of section.cells)
      if (cell.error !== null) notes.push(`REST rows ${cell.server} ${cell.algorithm}: ${cell.error.split('\n')[0]}`);
    return section;
  } catch (error) {
    notes.push(`REST rows failed: ${(error as Error).message.split('\n')[0]}`);
    options.log(`  ! REST rows failed: ${(error as Error).message}`);
    return null;
  } finally {
    await release();
  }
}
