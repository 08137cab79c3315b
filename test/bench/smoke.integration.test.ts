/**
 * End-to-end: the whole harness in its smoke profile against every server. Needs the
 * built dist/ (`npm test` builds first), ghz, Go for the Go peer and cargo for the Rust
 * peer (each skipped with a note when missing).
 */
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, isAbsolute, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cargoBuild } from '../../bench/kit/cargo-build.js';
import { findOnPath } from '../../bench/kit/exec.js';
import { findH2load } from '../../bench/kit/h2load.js';
import { repoPath } from '../../bench/kit/paths.js';
import { RUST_PEER_DIR, SERVERS, SERVER_NAMES } from '../../bench/macro/servers.js';
import { type BenchRun, parseCommandLine, runBench } from '../../bench/run.js';
import { tokensAndPrivateKeys } from '../reliability/helpers.js';

const out = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
// The run's own temporary directory (os.tmpdir() follows TMPDIR): its keys and scratch
// files must be gone afterwards, whatever other runs do in the shared /tmp meanwhile.
const runTmp = mkdtempSync(join(tmpdir(), 'bench-smoke-tmp-'));
const savedTmpdir = process.env.TMPDIR;
afterAll(() => {
  rmSync(out, { recursive: true, force: true });
  rmSync(runTmp, { recursive: true, force: true });
});

const cargoMissing = findOnPath('cargo') === null;
// A cold build of the Rust peer takes minutes on 2 cores: done here, under the benchmark's own
// deadline, so that the run below finds it built (a second) and its timeout measures the run.
beforeAll(() => {
  if (!cargoMissing) expect(cargoBuild(RUST_PEER_DIR, 'the Rust peer')).toEqual({ ok: true });
}, 960_000);

describe('npm run bench -- --smoke', () => {
  it('runs micro and ghz benchmarks against every server and records OK responses for each', { timeout: 300_000 }, async () => {
    expect(existsSync(repoPath('dist', 'bench', 'micro', 'alloc-child.js')), 'dist/ missing: run npm run build').toBe(true);
    // With the h2load cell (a few seconds at smoke durations): its path through the harness, results.json and the summary.
    const parsed = parseCommandLine(['--smoke', '--h2load', '--rest', '--out', out], SERVER_NAMES);
    if (parsed.kind !== 'run') throw new Error('expected a run');
    const log: string[] = [];
    process.env.TMPDIR = runTmp;
    let run: BenchRun;
    try {
      run = await runBench({ ...parsed.options, printSummary: false }, (line) => log.push(line));
    } finally {
      if (savedTmpdir === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmpdir;
    }

    // Files: results.json equal to what was returned, summary.md, and the latest link.
    const onDisk = JSON.parse(readFileSync(join(run.runDir, 'results.json'), 'utf8')) as BenchRun['results'];
    expect(onDisk.options.profile).toBe('smoke');
    expect(readFileSync(join(run.runDir, 'summary.md'), 'utf8')).toBe(run.summary);
    // The charts and report.html beside it: the CPU chart at least (the ratio ones need Go), each inline in the page.
    const report = readFileSync(join(run.runDir, 'report.html'), 'utf8');
    const svgs = readdirSync(run.runDir).filter((f) => f.endsWith('.svg'));
    expect(svgs).toContain('cpu-per-call.svg');
    for (const svg of svgs) expect(report).toContain(readFileSync(join(run.runDir, svg), 'utf8'));
    expect(readlinkSync(join(out, 'latest'))).toBe(basename(run.runDir));
    // The run ends with its verdict, first in summary.md too, and report.html's full path.
    expect(run.summary).toContain('## Verdict in five lines');
    expect(log.filter((l) => /^bench: (Run|ours \/ Go|ours \/ Rust|ours \/ Node peer|Against README\.md's range)\b/.test(l))).toHaveLength(
      5,
    );
    const reportPath = /^bench: report with \d+ chart\(s\): (.*)$/.exec(log.at(-1) ?? '')?.[1] ?? '';
    expect(isAbsolute(reportPath), log.at(-1)).toBe(true);
    expect(readFileSync(reportPath, 'utf8')).toBe(report);

    // Micro: every row timed.
    const micro = onDisk.micro;
    expect(micro?.rows.length).toBeGreaterThanOrEqual(4 * 3 * 3);
    for (const row of micro?.rows ?? []) expect(row.opsPerSecond, `${row.library} ${row.algorithm} ${row.operation}`).toBeGreaterThan(0);

    // Macro: every server ran, but those this machine cannot run (the Go ones without Go,
    // Bun where it is not installed), each with its reason; every cell answered OK.
    const macro = onDisk.macro;
    expect(macro).not.toBeNull();
    expect(onDisk.schema).toBe(2);
    const goMissing = findOnPath('go') === null;
    const cannotRun = SERVERS.filter((s) => s.optIn !== true)
      .filter(
        (s) => (goMissing && s.build === 'go-peer') || (cargoMissing && s.build === 'rust-peer') || (s.unavailable?.() ?? null) !== null,
      )
      .map((s) => s.name);
    const skipped = (macro?.servers ?? []).filter((s) => s.skipped !== null);
    // What this machine could not run (nginx, Go or Bun missing), and why, in the test's output.
    for (const s of skipped) console.info(`bench smoke: row ${s.name} skipped: ${s.skipped}`);
    expect(skipped.map((s) => s.name).sort()).toEqual([...cannotRun].sort());
    const present = (macro?.servers ?? []).filter((s) => s.skipped === null);
    // Every row but the opt-in ones (run only when named: --features, --servers).
    const profileRows = SERVERS.filter((s) => s.optIn !== true).map((s) => s.name);
    expect(present.map((s) => s.name).sort()).toEqual(profileRows.filter((n) => !cannotRun.includes(n)).sort());
    for (const server of present) {
      const cells = (macro?.cells ?? []).filter((c) => c.server === server.name);
      expect(cells.length, server.name).toBeGreaterThan(0);
      for (const cell of cells) {
        expect(cell.error, `${server.name} ${cell.scenario}`).toBeNull();
        expect(cell.aggregate?.okCount, `${server.name} ${cell.scenario}`).toBeGreaterThan(0);
        expect(cell.peakRssBytes, `${server.name} ${cell.scenario}`).toBeGreaterThan(0);
        expect(
          cell.rounds.map((r) => r.round),
          `${server.name} ${cell.scenario}`,
        ).toEqual([1, 2, 3, 4, 5]);
        expect(cell.rounds[0]?.serverCpuSeconds, `${server.name} ${cell.scenario}`).toBeGreaterThan(0);
        expect(cell.rounds[0]?.probeMs.before.length, `${server.name} ${cell.scenario}`).toBeGreaterThan(0);
      }
    }

    // Ratios per round with their intervals, the verdicts, and how quiet the machine was.
    // A ceiling ratio: ours on grpc-js against the grpc-js echo (ours on its own transport has no
    // echo of its stack, so `ours-ceiling` has no ratio).
    const onGrpcJsVsEcho = macro?.ratios.find(
      (r) => r.scenario === 'single-hs256-1x50' && r.comparison === 'grpc-js-transport-ceiling' && r.metric === 'rps',
    );
    expect(onGrpcJsVsEcho?.perRound).toHaveLength(5);
    expect(onGrpcJsVsEcho?.interval?.low).toBeGreaterThan(0);
    // A protected service's cell: every call carried a bearer token both rows accepted.
    const protectedRatio = macro?.ratios.find((r) => r.comparison === 'protected-local-rpc' && r.metric === 'callsPerCpuSecond');
    expect(protectedRatio?.perRound).toHaveLength(5);
    // ours against the Rust peer, per round, where cargo built it.
    if (!cargoMissing) {
      const oursRust = macro?.ratios.find((r) => r.comparison === 'ours-rust' && r.metric === 'callsPerCpuSecond');
      expect(oursRust?.perRound).toHaveLength(5);
      expect(oursRust?.interval?.low).toBeGreaterThan(0);
    }
    expect(macro?.probe?.cpus.length).toBeGreaterThan(0);
    expect(macro?.steal?.rounds).toBeGreaterThan(0);
    expect(run.summary).toContain('### Verdicts, from the intervals of the bold ratios');
    expect(run.summary).toMatch(/\*\*HS256 1c 1x50\*\* \(/);

    // The h2load cell of HS256: both servers, every round's calls OK by the servers' own
    // counts, or skipped with its reason where h2load is not installed.
    const h2load = onDisk.h2load;
    if (findH2load() === null) {
      expect(h2load?.skipped).toMatch(/h2load not found/);
    } else if (!goMissing) {
      expect(h2load?.cells.map((c) => `${c.server} ${c.algorithm}`)).toEqual(['jwt-grpc HS256', 'go HS256']);
      for (const cell of h2load?.cells ?? []) {
        expect(cell.error, cell.server).toBeNull();
        expect(cell.rounds, cell.server).toHaveLength(5);
        expect(cell.h2load?.errors, cell.server).toBe(0);
        expect(cell.h2load?.requestsPerS.median, cell.server).toBeGreaterThan(0);
        expect(cell.ghz?.requestsPerS.median, cell.server).toBeGreaterThan(0);
      }
      expect(h2load?.ratios[0]?.h2loadRequestsPerS?.low).toBeGreaterThan(0);
      expect(run.summary).toContain('### Saturated requests/s under h2load');
    }

    // The REST rows: the peers (the two Rust ones where cargo is) and jwt-grpc's three protocols,
    // every call OK, gRPC / REST per stack, and jwt-grpc's Connect rows against node-rest and its own gRPC.
    const rest = onDisk.rest;
    if (findH2load() === null) {
      expect(rest?.skipped).toMatch(/h2load not found/);
    } else {
      const ours = ['jwt-grpc', 'jwt-grpc-connect-h1', 'jwt-grpc-connect-h2'];
      const expected = cargoMissing
        ? ['node-fast-jwt', 'node-rest', ...ours]
        : ['node-fast-jwt', 'node-rest', 'rust', 'rust-rest', ...ours];
      expect(rest?.cells.map((c) => c.server)).toEqual(expected);
      for (const cell of rest?.cells ?? []) {
        expect(cell.error, cell.server).toBeNull();
        expect(cell.rounds, cell.server).toHaveLength(5);
        expect(cell.h2load?.errors, cell.server).toBe(0);
        expect(cell.h2load?.requestsPerS.median, cell.server).toBeGreaterThan(0);
      }
      expect(rest?.ratios.map((r) => r.stack)).toEqual(cargoMissing ? ['Node'] : ['Node', 'Rust']);
      for (const ratio of rest?.ratios ?? []) {
        // Rounds of 0.2 s beside other test files: a median, maybe too few rounds for an interval;
        // and a round's CPU time may be under one clock tick.
        expect(ratio.requestsPerS?.median, ratio.stack).toBeGreaterThan(0);
        expect(ratio.callsPerCpuSecond?.median, ratio.stack).toBeGreaterThan(0);
      }
      expect(rest?.pairs?.map((p) => `${p.of}/${p.to}`)).toEqual(['jwt-grpc-connect-h1/node-rest', 'jwt-grpc-connect-h2/jwt-grpc']);
      for (const pair of rest?.pairs ?? []) expect(pair.callsPerCpuSecond?.median, pair.of).toBeGreaterThan(0);
      expect(run.summary).toContain('## gRPC against REST (Node, Rust and jwt-grpc, one server core)');
    }

    // No token and no private key in anything the run wrote (every file under --out, ghz's
    // reports included: they repeat each VerifyJwt request) or logged, and the keys'
    // temporary directory is gone. The one smoke run of the suite: test/reliability/secrets.integration.test.ts relies on it.
    const written = readdirSync(out, { recursive: true, encoding: 'utf8' })
      .map((file) => join(out, file))
      .filter((path) => lstatSync(path).isFile()); // not through `latest`, a link to the run directory
    expect(written.length).toBeGreaterThan(2);
    const leaks = [
      ...tokensAndPrivateKeys('bench log', log.join('\n')),
      ...written.flatMap((path) => tokensAndPrivateKeys(path.slice(out.length + 1), readFileSync(path, 'utf8'))),
    ];
    expect(leaks, "tokens or key material in the bench results (redact ghz reports' options.data where the harness saves them)").toEqual(
      [],
    );
    // Node's compile cache (the bin's module.enableCompileCache) is kept on purpose: it is what
    // makes the next start faster, and it holds compiled code only (docs/cli.md).
    expect(readdirSync(runTmp).filter((name) => name !== 'node-compile-cache')).toEqual([]);
    expect(log.some((l) => /^\[\d+\/\d+\] \S+ \S+ round 1\/5 {2}elapsed \d\d:\d\d {2}~\d\d:\d\d left$/.test(l))).toBe(true);
  });
});
