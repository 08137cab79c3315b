/** The load sections of summary.md: h2load's saturated cells, open-loop latency, warm-up and start-up. */
import { formatInteger, formatMs, formatRatioInterval, formatUs } from '../common/format.js';
import { markdownTable } from '../common/markdown.js';
import type { MedianInterval } from '../common/median-interval.js';
import { type FixedLoadRow, fixedLoadRows } from './fixed-load.js';
import type { GeneratorFigures, H2loadSection, LoadResults, OpenLoopPoint, RestProtocol, RestSection } from './results.js';

/** `12,345 (12,001-12,650)`, or the median alone with the round count where no interval could be given. */
function rateInterval(value: MedianInterval): string {
  if (value.low === null || value.high === null) return `${formatInteger(value.median)} (${value.n} rounds: no interval)`;
  return `${formatInteger(value.median)} (${formatInteger(value.low)}-${formatInteger(value.high)})`;
}

function msInterval(value: MedianInterval | null): string {
  if (value === null) return 'n/a';
  if (value.low === null || value.high === null) return `${formatMs(value.median)} (n=${value.n})`;
  return `${formatMs(value.median)} (${formatMs(value.low)}-${formatMs(value.high)})`;
}

function percent(share: number | null): string {
  return share === null || !Number.isFinite(share) ? '?' : `${Math.round(share * 100)}`;
}

function generatorCells(f: GeneratorFigures | null): string[] {
  if (f === null) return ['✖', '', '', ''];
  return [
    rateInterval(f.requestsPerS) + (f.errors > 0 ? ' ⚠' : '') + (f.disturbedRounds > 0 ? ' ⊘' : ''),
    `${percent(f.serverCpu)} / ${percent(f.generatorCpu)}`,
    f.saturated,
    formatUs(f.cpuPerCallUs),
  ];
}

function h2loadPart(section: H2loadSection): string[] {
  const s = section.settings;
  const intro =
    `h2load (${s.threads} thread${s.threads === 1 ? '' : 's'}, ${s.connections} connections x ${s.streamsPerConnection} streams, pinned to CPU ${s.loadCpus.join(',')}) and ` +
    `ghz (${s.ghzConnections} connections, ${s.ghzConcurrency} in flight) against the same server process (CPU ${s.serverCpus.join(',')}) in the same ${s.rounds} rounds of ${s.durationS} s. ` +
    'Each cell: OK requests/s, median (95 % interval); `CPU %`: server / generator; `saturated`: the side ≥ 90 % busy (server first), `neither` = latency-bound or disturbed. ' +
    "Every h2load call's gRPC status is checked on the server's side (its own count of calls by status, before and after each run: bench/load/ok-count.ts), since h2load sees only HTTP 200; ⚠ marks non-OK calls, ⊘ rounds where other processes used > 5 % of the CPUs or steal was > 10 %. " +
    'For that count jwt-grpc runs with `--metrics-port 0` (metrics recorded on every call) and the Go peer with `--count-calls` (two atomic adds): ours carries the larger cost.';
  if (section.skipped !== null) return ['### Saturated requests/s under h2load', `Not run: ${section.skipped}.`];
  const rows = section.cells.map((c) => [c.algorithm, c.server, ...generatorCells(c.h2load), ...generatorCells(c.ghz)]);
  const ratios = section.ratios.map((r) => [
    r.algorithm,
    formatRatioInterval(r.h2loadRequestsPerS),
    formatRatioInterval(r.ghzRequestsPerS),
    formatRatioInterval(r.h2loadCallsPerCpuSecond),
  ]);
  return [
    '### Saturated requests/s under h2load',
    intro,
    markdownTable(
      ['algorithm', 'server', 'h2load req/s', 'CPU %', 'saturated', 'CPU µs/call', 'ghz req/s', 'CPU %', 'saturated', 'CPU µs/call'],
      rows,
      2,
    ),
    'ours / Go, per round (median, 95 % interval):',
    markdownTable(['algorithm', 'req/s under h2load', 'req/s under ghz', 'calls per CPU-second (h2load)'], ratios, 1),
  ];
}

function share(point: OpenLoopPoint): string {
  if (point.fractionOfOwnCapacity !== undefined) return `${Math.round(point.fractionOfOwnCapacity * 100)} % of own`;
  if (point.fractionOfGoCapacity !== undefined) return `${Math.round(point.fractionOfGoCapacity * 100)} % of Go's`;
  return 'fixed';
}

function openLoopPart(results: LoadResults): string[] {
  const points = results.openLoop ?? [];
  const settings = results.loadSettings?.openLoop;
  const intro =
    `Open loop: calls leave on a Poisson schedule at the offered rate whatever the server does, over ${settings?.connections ?? '?'} connections ` +
    "(bench/load/openloop, grpc-go), and each latency runs from the call's intended send time, so a queue shows instead of slowing the sender. " +
    `${settings?.rounds ?? '?'} rounds of ${settings?.durationS ?? '?'} s per rate; each figure the median over rounds (95 % interval), ms. ` +
    `Capacities: ${(settings?.capacities ?? []).map((c) => `${c.server} ${c.algorithm} ${formatInteger(c.requestsPerS)}/s (${c.source})`).join(', ')}.`;
  const rows = points.map((p) => [
    p.algorithm,
    p.server,
    share(p),
    formatInteger(p.offeredRps),
    formatInteger(p.achievedRps),
    msInterval(p.p50Ms),
    msInterval(p.p99Ms),
    msInterval(p.p999Ms),
    String(p.errors) + ((p.generatorCpu ?? 0) >= 0.9 ? ' ⚑' : ''),
    formatMs(p.maxSendLagMs),
  ]);
  const headline = (results.openLoopRatios ?? []).map((r) => [
    r.algorithm,
    `${Math.round(r.fractionOfGoCapacity * 100)} % (${formatInteger(r.offeredRps)}/s)`,
    formatRatioInterval(r.p99Ratio),
  ]);
  return [
    '### Latency at a fixed arrival rate (open loop)',
    intro,
    "p99 ours / Go at a share of Go's capacity (< 1.00x: ours answers faster at that load):",
    markdownTable(['algorithm', 'offered', 'p99 ours / Go'], headline, 2),
    markdownTable(
      ['algorithm', 'server', 'rate', 'offered/s', 'achieved/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'errors', 'send lag ms'],
      rows,
      3,
    ),
    "⚑: the generator was ≥ 90 % busy. `send lag`: the largest delay of a send behind its schedule (the generator's own lag, which the latencies include). An achieved rate below the offered one means the server fell behind: its queue grew for the whole round.",
  ];
}

function usInterval(value: MedianInterval | null): string {
  if (value === null) return 'n/a';
  if (value.low === null || value.high === null) return `${formatUs(value.median)} (n=${value.n})`;
  return `${formatUs(value.median)} (${formatUs(value.low)}-${formatUs(value.high)})`;
}

/** One server's cell of the fixed-load table: µs per call (interval), its busy share, and its achieved rate where it fell behind. */
function fixedLoadSide(side: FixedLoadRow['ours'], offeredRps: number): string[] {
  if (side === null) return ['n/a', ''];
  const behind = side.achievedRps < offeredRps * 0.98 ? ` (achieved ${formatInteger(side.achievedRps)}/s)` : '';
  return [usInterval(side.cpuPerCallUs) + behind, percent(side.serverCpu)];
}

/** CPU per call at 25/50/80 % of Go's saturated rate, both servers offered the same open-loop rate; empty when not measured. */
export function fixedLoadPart(results: LoadResults): string[] {
  const rows = fixedLoadRows(results.openLoop ?? [], results.openLoopRatios ?? []);
  if (rows.length === 0) return [];
  const settings = results.loadSettings?.openLoop;
  const table = rows.map((r) => [
    r.algorithm,
    `${Math.round(r.fractionOfGoCapacity * 100)} % (${formatInteger(r.offeredRps)}/s)`,
    ...fixedLoadSide(r.ours, r.offeredRps),
    ...fixedLoadSide(r.go, r.offeredRps),
    formatRatioInterval(r.ratio) + (r.disturbedRounds > 0 ? ' ⊘' : ''),
  ]);
  return [
    '### CPU per call at fixed offered load',
    `Both servers offered the same open-loop rate, a share of Go's saturated requests/s in this run (capacities above), ${settings?.rounds ?? '?'} interleaved rounds of ${settings?.durationS ?? '?'} s per rate. ` +
      "Server CPU time (process tree, /proc) over each generator run / its OK calls; `busy %`: that CPU time / wall time of the server's core. " +
      'The ratio is CPU per call jwt-grpc / Go taken round by round, median (95 % interval): < 1.00x means ours spends less CPU per call at that load ' +
      "(the inverse of the saturated tables' calls per CPU-second). ⊘: rounds where other processes used > 5 % of the CPUs or steal was > 10 %.",
    markdownTable(
      ['algorithm', "offered (% of Go's capacity)", 'jwt-grpc µs/call', 'busy %', 'Go µs/call', 'busy %', 'CPU per call, ours / Go'],
      table,
      2,
    ),
  ];
}

function warmupPart(results: LoadResults): string[] {
  const points = results.warmup ?? [];
  const settings = results.loadSettings?.warmup;
  const keys = [...new Set(points.map((p) => `${p.algorithm}|${p.warmupCalls}`))];
  const rows = keys.map((key) => {
    const [algorithm, calls] = key.split('|') as [string, string];
    const of = (server: string) => points.find((p) => p.algorithm === algorithm && String(p.warmupCalls) === calls && p.server === server);
    const ours = of('jwt-grpc');
    const go = of('go');
    return [
      algorithm,
      formatInteger(Number(calls)),
      ours === undefined ? 'n/a' : formatUs(ours.cpuPerCallUs),
      go === undefined ? 'n/a' : formatUs(go.cpuPerCallUs),
      formatRatioInterval(ours?.ratioToGo ?? null),
    ];
  });
  const startup = (results.startup ?? []).map((s) => [s.server, msInterval(s.timeToFirstOkMs)]);
  return [
    '### Warm-up and start-up',
    `Each row: every server started afresh ${settings?.starts ?? '?'} times, sent that many calls (ghz, ${settings?.connections ?? '?'} connection x ${settings?.concurrency ?? '?'} in flight), ` +
      `then measured for ${settings?.roundsPerStart ?? '?'} rounds of ${settings?.durationS ?? '?'} s (same shape); CPU µs per call is the median over starts and rounds, ` +
      'the ratio (calls per server CPU-second, ours / Go; > 1.00x: ours spends less) is taken per (start, round) pair. ' +
      'Few warm-up calls is a freshly started pod (a Kubernetes scale-up); many is a long-running one.',
    markdownTable(['algorithm', 'warm-up calls', 'jwt-grpc µs/call', 'Go µs/call', 'ours / Go, calls per CPU-s'], rows, 1),
    'Time from spawning the server to its first OK GenerateJwt (every start of the sweep; median, 95 % interval):',
    markdownTable(['server', 'ms'], startup, 1),
  ];
}

/** How a REST row's protocol reads in the summary. */
const PROTOCOL_LABELS: Readonly<Record<RestProtocol, string>> = {
  grpc: 'gRPC',
  rest: 'REST',
  'connect-h1': 'Connect JSON, HTTP/1.1',
  'connect-h2': 'Connect JSON, HTTP/2',
};

/**
 * Where a ratio stands against its least target: `met` when its whole interval is at or
 * above it, `not met` when its whole interval is below, `not shown` when the interval
 * holds it (the rounds cannot tell the ratio from the target); `n/a` without a ratio.
 *
 * @example
 * ```ts
 * targetVerdict({ median: 1.1, low: 1.02, high: 1.2, n: 5 }, 1); // 'met (≥ 1.00x)'
 * ```
 */
export function targetVerdict(ratio: MedianInterval | null, target: number): string {
  const want = `${target.toFixed(2)}x`;
  if (ratio === null) return 'n/a';
  const low = ratio.low ?? ratio.median;
  const high = ratio.high ?? ratio.median;
  if (low >= target) return `met (≥ ${want})`;
  if (high < target) return `not met (< ${want})`;
  return `not shown either way (the interval holds ${want})`;
}

/** The REST rows: each server under h2load, gRPC / REST per stack, and jwt-grpc's Connect rows against their peers. */
export function restPart(section: RestSection): string[] {
  const s = section.settings;
  const heading = '## gRPC against REST (Node, Rust and jwt-grpc, one server core)';
  if (section.skipped !== null) return [heading, `Not run: ${section.skipped}.`];
  const intro =
    `The same work per call (bench/peers/README.md) over gRPC, over \`POST /token\` (HTTP/1.1 keep-alive, JSON) and over Connect (JSON, on HTTP/1.1 keep-alive and on HTTP/2), ` +
    `each server one process on CPU ${s.serverCpus.join(',')}, ` +
    `all driven by h2load (${s.threads} thread${s.threads === 1 ? '' : 's'}, pinned to CPU ${s.loadCpus.join(',')}) with ${s.inFlight} calls in flight: ` +
    `HTTP/2 ${s.grpcConnections} connections x ${s.inFlight / s.grpcConnections} streams, HTTP/1.1 \`--h1\` ${s.restConnections} connections x 1 request (no pipelining); ` +
    `${s.rounds} interleaved rounds of ${s.durationS} s after ${s.warmupS} s of warm-up per server start. Requests/s: median over the rounds, 95 % interval; ` +
    "gRPC and jwt-grpc's calls are checked OK on the server's side (`--count-calls`, jwt-grpc's `--metrics-port 0`: metrics recorded on every call), " +
    'REST calls by their HTTP status. ⚠ marks non-OK calls, ⊘ disturbed rounds.';
  const rows = section.cells.map((c) => [c.algorithm, c.stack, PROTOCOL_LABELS[c.protocol], c.server, ...generatorCells(c.h2load)]);
  const ratios = section.ratios.map((r) => [
    r.algorithm,
    r.stack,
    `${r.grpc} / ${r.rest}`,
    formatRatioInterval(r.requestsPerS),
    formatRatioInterval(r.callsPerCpuSecond),
  ]);
  return [
    heading,
    intro,
    markdownTable(['algorithm', 'stack', 'protocol', 'server', 'req/s', 'CPU % (server / h2load)', 'saturated', 'CPU µs/call'], rows, 4),
    'gRPC / REST per round (> 1.00x: gRPC better; calls per CPU-second > 1.00x: gRPC spends less CPU per call):',
    markdownTable(['algorithm', 'stack', 'servers', 'requests/s', 'calls per CPU-second'], ratios, 3),
    ...pairsPart(section),
    ...section.skippedServers.map((x) => `- not run: ${x.server}: ${x.reason.split('\n')[0]}`),
  ];
}

/** jwt-grpc's Connect rows against node-rest and its own gRPC, with the target where there is one. */
function pairsPart(section: RestSection): string[] {
  const pairs = section.pairs ?? [];
  if (pairs.length === 0) return [];
  const cpuOf = (server: string, algorithm: string) =>
    formatUs(section.cells.find((c) => c.server === server && c.algorithm === algorithm)?.h2load?.cpuPerCallUs ?? Number.NaN);
  const rows = pairs.map((p) => [
    p.algorithm,
    `${p.of} / ${p.to}`,
    formatRatioInterval(p.requestsPerS),
    formatRatioInterval(p.callsPerCpuSecond),
    `${cpuOf(p.of, p.algorithm)} / ${cpuOf(p.to, p.algorithm)} µs`,
    p.target === null ? '' : targetVerdict(p.callsPerCpuSecond, p.target),
  ]);
  return [
    "jwt-grpc's Connect rows per round (> 1.00x: the first server better; calls per CPU-second > 1.00x: it spends less CPU per call):",
    markdownTable(['algorithm', 'servers', 'requests/s', 'calls per CPU-second', 'CPU per call', 'target, calls per CPU-second'], rows, 2),
  ];
}

/** The start-up section: each row's median ms and, where it has one, its ratio to the bare-Node row of the same runs. */
function startupPart(results: LoadResults): string[] {
  const settings = results.startupSettings;
  const rows = (results.startupRows ?? []).map((row) => [
    row.what,
    msInterval(row.ms),
    row.ratio === null || row.ratioTo === null ? '' : `${formatRatioInterval(row.ratio)} of ${row.ratioTo}`,
  ]);
  return [
    '### Start-up',
    `${settings?.runs ?? '?'} interleaved runs, every process pinned to CPU ${settings?.cpus.join(',') || '(unpinned)'}; median ms and 95 % interval; ` +
      'each ratio is taken run by run against the bare-Node row of the same run (the targets: a key file ≤ 2.50x the bare listener, ' +
      `worker replacement ≤ 150 ms, \`token\` ≤ 150 ms). Worker replacement runs under ${settings?.replacementLoadCalls ?? '?'} calls kept in flight.`,
    markdownTable(['what', 'ms', 'ratio'], rows, 1),
  ];
}

/** The load parts of summary.md; empty when no load section ran. */
export function loadSummary(results: LoadResults): string[] {
  if (results.loadSettings === null) return [];
  const goSections = results.h2load !== null || results.openLoop !== null || results.warmup !== null || results.startupRows !== null;
  const parts = goSections ? ['## Load: h2load, open loop, warm-up (jwt-grpc and Go, one server core)'] : [];
  if (results.h2load !== null) parts.push(...h2loadPart(results.h2load));
  if (results.openLoop !== null) parts.push(...fixedLoadPart(results), ...openLoopPart(results));
  if (results.warmup !== null) parts.push(...warmupPart(results));
  if (results.startupRows !== null) parts.push(...startupPart(results));
  if (results.rest != null) parts.push(...restPart(results.rest));
  parts.push(...results.loadSettings.notes.map((n) => `- ${n}`));
  return parts;
}
