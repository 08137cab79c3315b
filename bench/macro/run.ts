import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BOOTSTRAP_RESAMPLES, CONFIDENCE, DEFAULT_SEED } from '../common/median-interval.js';
import { Progress } from '../common/progress.js';
import { buildHtmlRenderer } from '../ghz/html-report.js';
import type { CorePlan } from '../harness/cores.js';
import { goBuild } from '../kit/go-build.js';
import { cargoBuild } from '../kit/cargo-build.js';
import { writeKeysFile } from '../harness/keys-file.js';
import type { ServerProcess } from '../kit/launcher.js';
import { SpeedProbes, probeBaselines, summarizeProbes } from '../harness/probe.js';
import { type OpensslFloor, OpensslFloorProbe } from '../harness/openssl-floor.js';
import { isFloorScenario } from './floor-section.js';
import type { BenchAlgorithm } from '../options/algorithms.js';
import type { MatrixScope } from '../options/profiles.js';
import { type ColumnContext, runColumn, splitFor, withProbeDeviations } from './column.js';
import { computeRatios } from './comparisons.js';
import { summarizeSteal } from './disturbance.js';
import type { CellResult, MacroResults, ServerStatus } from './results.js';
import { type Scenario, buildScenarios, filterScenarios, onePerKind } from './scenarios.js';
import {
  GO_PEER_BINARY,
  GO_PEER_DIR,
  RUST_PEER_DIR,
  SERVERS,
  type ServerSpec,
  VERIFY_ISSUED_NOTE,
  baselineServer,
  serves,
} from './servers.js';
import { type BaselineBuild, buildBaseline } from './baseline.js';
import { type JwksThroughput, measureJwksThroughput } from './jwks-throughput.js';
import { type PreparedAssets, type RowNeed, prepareRowAssets } from './row-assets.js';
import { type RevokeThroughput, measureRevokeThroughput } from './revoke-throughput.js';
import { type KeyBackendResults, measureKeyBackends } from '../keys/backends.js';

export interface MacroOptions {
  readonly ghz: string;
  readonly plan: CorePlan;
  readonly algorithms: readonly BenchAlgorithm[];
  /** Server names; null: the scope's. */
  readonly servers: readonly string[] | null;
  /** Scenario id filters; null: the scope's. */
  readonly cells: readonly string[] | null;
  readonly scope: MatrixScope;
  /** Whether --server-cores was given: the "N cores" groups then run in every scope. */
  readonly serverCoresGiven: boolean;
  readonly durationS: number;
  readonly warmupS: number;
  readonly rounds: number;
  readonly html: boolean;
  readonly runDir: string;
  readonly log: (line: string) => void;
  /** Registers a cleanup for an interrupted run; returns its unregistration. */
  readonly onCleanup: (cleanup: () => void) => () => void;
  /** A commit to build aside and run as `jwt-grpc@<hash>` (macro/baseline.ts); null: none. */
  readonly baselineRef?: string | null;
  /** Also measure the JWK Set over HTTP at saturation (macro/jwks-throughput.ts). */
  readonly jwksThroughput?: boolean;
  /** Also measure RevokeJwt's throughput on each store (macro/revoke-throughput.ts). */
  readonly revokeThroughput?: boolean;
  /** Also measure ES256 GenerateJwt with the key in these backends against in memory (keys/backends.ts); empty or absent: not measured. */
  readonly keyBackends?: readonly ('pkcs11' | 'kms')[];
}

/** The scenarios a run measures: --cells when given, else the profile's scope of the matrix. */
export function selectScenarios(all: readonly Scenario[], options: Pick<MacroOptions, 'cells' | 'scope' | 'serverCoresGiven'>): Scenario[] {
  if (options.cells !== null) return filterScenarios(all, options.cells);
  switch (options.scope) {
    case 'all':
      return [...all];
    case 'ratios':
      return all.filter((s) => s.group === 'single' || options.serverCoresGiven);
    case 'one-per-kind':
      return onePerKind(all);
  }
}

/** The servers a run starts: --servers when given, else the profile's scope (`ratios` leaves out the variants). */
export function selectServers(all: readonly ServerSpec[], options: Pick<MacroOptions, 'servers' | 'scope'>): ServerSpec[] {
  if (options.servers !== null) return all.filter((s) => (options.servers as readonly string[]).includes(s.name));
  // Opt-in rows need their own setup (certificates, a sink, h2load, another build): only when named.
  const profile = all.filter((s) => s.optIn !== true);
  return options.scope === 'ratios' ? profile.filter((s) => s.role !== 'variant') : profile;
}

/**
 * The macro benchmark: every (scenario, server) cell of the selection with ghz, column by
 * column (all servers of a scenario, in interleaved rounds: see runColumn), then each
 * round's probe deviations, the per-round ratios and their intervals.
 */
export async function runMacro(options: MacroOptions): Promise<MacroResults> {
  const startedAt = performance.now();
  const notes = [...options.plan.notes];
  const [load1 = 0] = loadavg();
  if (load1 > 0.5) {
    notes.push(`the machine was not idle at the start (1-minute load average ${load1.toFixed(2)}): expect ⊘ marks`);
  }
  // Built first: a commit that does not build stops the run before any measurement.
  const baseline: BaselineBuild | null = options.baselineRef == null ? null : buildBaseline(options.baselineRef, options.log);
  const selected = [
    ...selectServers(SERVERS, options),
    ...(baseline === null ? [] : [baselineServer(baseline.short, baseline.cli, baseline.hasJtiFlag, baseline.hasVerifyIssuedFlag)]),
  ];
  const skipped = prepareServers(selected, options.log);
  const selectedScenarios = selectScenarios(buildScenarios(options.algorithms, options.plan.multi), options);
  let html = options.html;
  if (html) {
    const renderer = buildHtmlRenderer();
    if (!renderer.ok) {
      notes.push(`HTML reports not produced: ${renderer.reason}`);
      html = false;
    }
  }
  const needs = new Set<RowNeed>(selected.filter((s) => !skipped.has(s.name)).flatMap((s) => s.needs ?? []));
  if (options.jwksThroughput === true) needs.add('h2load');
  if (options.revokeThroughput === true) for (const need of ['revocations', 'redis'] as const) needs.add(need);
  let prepared: PreparedAssets;
  try {
    prepared = await prepareRowAssets(needs, options.algorithms, options.plan, options.plan.single.loadCpus);
  } catch (error) {
    baseline?.remove();
    throw error;
  }
  for (const s of selected) {
    const lacking = (s.needs ?? []).find((need) => prepared.missing.has(need));
    if (lacking !== undefined && !skipped.has(s.name)) skipped.set(s.name, prepared.missing.get(lacking) as string);
  }
  const runnable = selected.filter((s) => !skipped.has(s.name));
  if (runnable.some((s) => s.name === 'jwt-grpc-nginx')) notes.push(...fleetCoreNotes(options.plan));
  if (runnable.some((s) => s.role === 'ours' || s.role === 'variant')) notes.push(VERIFY_ISSUED_NOTE);
  const columns = selectedScenarios
    .map((scenario) => ({ scenario, servers: runnable.filter((s) => serves(s, scenario.group, scenario.method)) }))
    .filter((column) => column.servers.length > 0);
  // A scenario none of the selected servers serves (the protected cells without their rows) is no column of the tables.
  const scenarios = columns.map((column) => column.scenario);
  const cellCount = columns.reduce((sum, column) => sum + column.servers.length, 0);
  if (selectedScenarios.length > 0 && cellCount === 0) notes.push('no (scenario, server) pair to run with this selection');

  const keys = writeKeysFile(options.algorithms);
  const scratchDir = mkdtempSync(join(tmpdir(), 'jwt-grpc-bench-ghz-'));
  const probes = new SpeedProbes(options.plan, startedAt);
  let current: readonly ServerProcess[] = [];
  const unregister = options.onCleanup(() => {
    for (const server of current) server.stop(2000).catch(() => undefined);
    void probes.close();
    void prepared.close();
    keys.remove();
    baseline?.remove();
    rmSync(scratchDir, { recursive: true, force: true });
  });
  // The floor of ES256 (issue 34): OpenSSL's own sign + verify on the server's core, before
  // and after the columns and before each round of an ES256 cell.
  const floorProbe = columns.some(({ scenario }) => isFloorScenario(scenario))
    ? new OpensslFloorProbe(options.plan, options.plan.single.serverCpus, startedAt)
    : null;
  let floor: OpensslFloor | null = null;
  let cells: CellResult[] = [];
  let jwks: JwksThroughput | null = null;
  let revoke: RevokeThroughput | null = null;
  let keyBackends: KeyBackendResults | null = null;
  try {
    for (const scenario of scenarios) mkdirSync(join(options.runDir, 'ghz', scenario.id), { recursive: true });
    const ctx: ColumnContext = {
      ghz: options.ghz,
      plan: options.plan,
      keysFile: keys.path,
      runDir: options.runDir,
      scratchDir,
      durationS: options.durationS,
      warmupS: options.warmupS,
      rounds: options.rounds,
      html,
      // A step is one measurement; each server's start and warm-up are spread over its rounds.
      progress: new Progress(cellCount * options.rounds, options.durationS + 0.2 + (options.warmupS + 0.6) / options.rounds, options.log),
      probes,
      startedAt,
      onServers: (servers) => (current = servers),
      log: options.log,
      assets: prepared.assets,
      beforeRound: (scenario, round) => {
        if (isFloorScenario(scenario)) floorProbe?.measure({ scenario: scenario.id, round });
      },
    };
    if (floorProbe !== null) options.log('measuring the OpenSSL floor of ES256 (openssl speed ecdsap256 on the server core)');
    floorProbe?.measure();
    for (const { scenario, servers } of columns) {
      for (const cell of await runColumn(ctx, scenario, servers)) {
        if (cell.error !== null) options.log(`  ! ${cell.server} ${scenario.id}: ${cell.error.split('\n')[0]}`);
        cells.push(cell);
      }
    }
    floorProbe?.measure();
    floor = floorProbe?.result() ?? null;
    if (options.jwksThroughput === true) jwks = await jwksThroughput(options, prepared, keys.path);
    if (options.revokeThroughput === true) {
      options.log('measuring RevokeJwt on each store (memory, file, Redis)');
      const redisMissing = prepared.missing.get('redis');
      revoke = await measureRevokeThroughput({
        ghz: options.ghz,
        plan: options.plan,
        keysFile: keys.path,
        assets: prepared.assets,
        missing: new Map(redisMissing === undefined ? [] : [['redis', redisMissing]]),
        scratchDir,
        durationS: options.durationS,
        warmupS: options.warmupS,
        rounds: options.rounds,
        log: options.log,
      });
    }
    if ((options.keyBackends ?? []).length > 0) keyBackends = await keyBackendRows(options);
  } finally {
    unregister();
    await probes.close();
    notes.push(...(await prepared.close()));
    baseline?.remove();
    keys.remove();
    rmSync(scratchDir, { recursive: true, force: true });
  }
  // Only now is each CPU's median probe over the run known: what each round's probes are judged against.
  const baselines = probeBaselines(probes.readings);
  cells = cells.map((cell) => {
    const scenario = scenarios.find((s) => s.id === cell.scenario) as Scenario;
    return withProbeDeviations(cell, splitFor(options.plan, scenario).serverCpus, baselines);
  });
  const servers = selected.map((s) => serverStatus(s, skipped.get(s.name) ?? null));
  const bootstrap = { seed: DEFAULT_SEED, resamples: BOOTSTRAP_RESAMPLES, confidence: CONFIDENCE };
  return {
    settings: {
      durationS: options.durationS,
      warmupS: options.warmupS,
      rounds: options.rounds,
      repetitions: options.rounds,
      html,
      bootstrap,
    },
    ghzPath: options.ghz,
    corePlan: options.plan,
    scenarios,
    servers,
    cells,
    ratios: computeRatios(scenarios, servers, cells, bootstrap),
    probe: probes.readings.length === 0 ? null : summarizeProbes(probes.readings),
    steal: summarizeSteal(cells),
    notes,
    ...(jwks === null ? {} : { jwks }),
    ...(revoke === null ? {} : { revoke }),
    ...(keyBackends === null ? {} : { keyBackends }),
    ...(floor === null ? {} : { opensslFloor: floor }),
  };
}

/** The `pkcs11` and `kms` features' rows: in memory and each backend, on the single-core scenarios' server CPUs, interleaved over the run's rounds. */
function keyBackendRows(options: MacroOptions): Promise<KeyBackendResults> {
  options.log(`measuring ES256 GenerateJwt with the key in ${(options.keyBackends ?? []).join(', ')} against in memory`);
  return measureKeyBackends({
    ghz: options.ghz,
    sources: new Set(options.keyBackends),
    durationS: options.durationS,
    rounds: options.rounds,
    levels: [1, 8, 64],
    serverCpus: options.plan.pinned ? options.plan.single.serverCpus : [],
    log: options.log,
  });
}

/** The JWK Set at saturation on the discovery row's server (without its background load), or why not. */
async function jwksThroughput(options: MacroOptions, prepared: PreparedAssets, keysFile: string): Promise<JwksThroughput> {
  const server = SERVERS.find((s) => s.name === 'jwt-grpc-jwks-load') as ServerSpec;
  const h2load = prepared.assets.h2load;
  if (h2load === null) {
    return {
      server: server.name,
      connections: 0,
      rounds: [],
      rps: null,
      perCoreRps: null,
      error: prepared.missing.get('h2load') ?? 'h2load not found',
    };
  }
  options.log('measuring GET /.well-known/jwks.json at saturation (h2load)');
  return measureJwksThroughput({
    h2load,
    server,
    plan: options.plan,
    keysFile,
    durationS: options.durationS,
    warmupS: options.warmupS,
    rounds: options.rounds,
    log: options.log,
  });
}

/** Builds what needs building (the Go peer, the Rust peer) and returns the servers that cannot run, with why. */
function prepareServers(servers: readonly ServerSpec[], log: (line: string) => void): Map<string, string> {
  const skipped = new Map<string, string>();
  for (const s of servers) {
    if (s.build === undefined && !existsSync(s.entryFile)) skipped.set(s.name, `${s.entryFile} missing: run \`npm run build\` first`);
    const unavailable = s.unavailable?.() ?? null;
    if (unavailable !== null && !skipped.has(s.name)) skipped.set(s.name, unavailable);
  }
  if (servers.some((s) => s.build === 'go-peer' && !skipped.has(s.name))) {
    log('building the Go peer (go build in bench/peers/go)');
    const outcome = goBuild(GO_PEER_DIR, GO_PEER_BINARY, 'the Go peer');
    if (!outcome.ok) {
      for (const s of servers.filter((x) => x.build === 'go-peer')) skipped.set(s.name, outcome.reason);
    }
  }
  if (servers.some((s) => s.build === 'rust-peer' && !skipped.has(s.name))) {
    log('building the Rust peer (cargo build --release --locked in bench/peers/rust; a cold build takes minutes)');
    const outcome = cargoBuild(RUST_PEER_DIR, 'the Rust peer');
    if (!outcome.ok) {
      for (const s of servers.filter((x) => x.build === 'rust-peer')) skipped.set(s.name, outcome.reason);
    }
  }
  return skipped;
}

function serverStatus(server: ServerSpec, skipped: string | null): ServerStatus {
  return {
    name: server.name,
    label: server.label,
    role: server.role,
    stack: server.stack,
    description: server.description,
    cluster: server.cluster,
    usesAllCores: server.usesAllCores,
    skipped,
  };
}

/** Where the replicas-behind-nginx row's processes run, said plainly: they share cores with each other, and maybe with ghz. */
export function fleetCoreNotes(plan: CorePlan): string[] {
  return plan.multi.map(({ cores, workers, serverCpus, loadCpus }) =>
    plan.pinned
      ? `jwt-grpc-nginx on N = ${cores}: its ${workers} replicas and nginx share CPU${serverCpus.length === 1 ? '' : 's'} ${serverCpus.join(',')} (nginx's CPU counts as the server's); ghz runs on CPU${loadCpus.length === 1 ? '' : 's'} ${loadCpus.join(',')}`
      : `jwt-grpc-nginx on N = ${cores}: not pinned: its ${workers} replicas, nginx and ghz share every CPU`,
  );
}
