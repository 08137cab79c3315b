/**
 * The load sections' generators against real servers on loopback (the `integration` project:
 * h2load, ghz and the open-loop generator drive jwt-grpc and the Go peer for seconds, and
 * only counts are checked, which another file beside this one cannot change).
 * Needs ghz, Go and h2load (`npm run tools`); skipped with the reason without them.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quantileOfSorted } from '../../bench/common/median-interval.js';
import { planCores } from '../../bench/harness/cores.js';
import { type KeysFile, writeKeysFile } from '../../bench/harness/keys-file.js';
import { findOnPath, runCommand } from '../../bench/kit/exec.js';
import { TEST_GO_BUILD_TIMEOUT_MS, goBuild } from '../../bench/kit/go-build.js';
import { GO_TOOLS, findGoTool } from '../../bench/kit/tools.js';
import { findH2load } from '../../bench/kit/h2load.js';
import { runH2loadSection } from '../../bench/load/h2load-section.js';
import { type LoadContext, startLoadServer } from '../../bench/load/load-servers.js';
import { OPEN_LOOP_BINARY, OPEN_LOOP_DIR, type OpenLoopRun, buildOpenLoop, openLoopArgs } from '../../bench/load/open-loop.js';
import { GO_PEER_BINARY, GO_PEER_DIR } from '../../bench/macro/servers.js';

// Real servers on loopback: a request for an algorithm the key file lacks is answered
// INVALID_ARGUMENT inside an HTTP 200, which h2load alone would count as a success.
const ghz = findGoTool(GO_TOOLS.ghz);
const h2load = findH2load();
const go = findOnPath('go');

describe('percentiles', () => {
  it("of the open-loop generator are R's type 7, as quantileOfSorted here (its Go test)", { timeout: 120_000 }, (context) => {
    if (go === null) context.skip();
    const result = runCommand('go', ['test', '.'], { cwd: OPEN_LOOP_DIR, timeoutMs: 120_000 });
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(quantileOfSorted([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.99)).toBeCloseTo(9.91, 9);
  });
});

describe.skipIf(ghz === null || h2load === null || go === null)('with real servers', () => {
  let keys: KeysFile;
  let ctx: LoadContext;
  let scratchDir: string;
  beforeAll(() => {
    expect(goBuild(GO_PEER_DIR, GO_PEER_BINARY, 'the Go peer', TEST_GO_BUILD_TIMEOUT_MS)).toEqual({ ok: true });
    keys = writeKeysFile(['HS256']);
    scratchDir = mkdtempSync(join(tmpdir(), 'load-test-'));
    ctx = { plan: planCores(null), keysFile: keys.path, scratchDir, ghz: ghz as string, log: () => undefined, onServers: () => undefined };
  }, 300_000);
  afterAll(() => {
    keys?.remove();
    rmSync(scratchDir, { recursive: true, force: true });
  });

  it('h2load counts a gRPC error as an error, not a success, on both servers', { timeout: 60_000 }, async () => {
    const section = await runH2loadSection(ctx, {
      algorithms: ['RS256'],
      servers: ['jwt-grpc', 'go'],
      durationS: 0.5,
      warmupS: 0,
      rounds: 1,
    });
    expect(section.skipped).toBeNull();
    for (const cell of section.cells) {
      expect(cell.error, cell.server).toBeNull();
      const round = cell.rounds[0];
      expect(round?.h2load.errors, cell.server).toBeGreaterThan(0);
      expect(round?.h2load.requestsPerS, cell.server).toBe(0);
      expect(round?.ghz.errors, cell.server).toBeGreaterThan(0);
    }
  });

  it("h2load's OK calls match the server's count when every call is OK", { timeout: 60_000 }, async () => {
    const section = await runH2loadSection(ctx, { algorithms: ['HS256'], servers: ['jwt-grpc'], durationS: 0.5, warmupS: 0, rounds: 1 });
    const round = section.cells[0]?.rounds[0];
    expect(round?.h2load.errors).toBe(0);
    expect(round?.h2load.requestsPerS).toBeGreaterThan(0);
  });

  it('the open-loop generator keeps its schedule, times from the intended send and counts error statuses', {
    timeout: 60_000,
  }, async () => {
    expect(buildOpenLoop()).toBeNull();
    expect(existsSync(OPEN_LOOP_BINARY)).toBe(true);
    const server = await startLoadServer(ctx, 'jwt-grpc', false);
    try {
      const run = (algorithm: string): OpenLoopRun => {
        const result = runCommand(OPEN_LOOP_BINARY, openLoopArgs(server.process.port, algorithm, 400, 0.5, 2, 1), { timeoutMs: 30_000 });
        expect(result.status, result.stderr).toBe(0);
        return JSON.parse(result.stdout) as OpenLoopRun;
      };
      const ok = run('HS256');
      expect(ok.sent).toBeGreaterThan(100); // Poisson: 200 expected
      expect(ok.ok).toBe(ok.sent);
      expect(ok.errors).toEqual({});
      expect(ok.p50Ms).toBeGreaterThan(0);
      expect(ok.p50Ms).toBeLessThanOrEqual(ok.p99Ms);
      expect(ok.p99Ms).toBeLessThanOrEqual(ok.p999Ms);
      expect(ok.p999Ms).toBeLessThanOrEqual(ok.maxMs);
      const bad = run('RS256');
      expect(bad.ok).toBe(0);
      expect(bad.errors).toEqual({ InvalidArgument: bad.sent });
    } finally {
      await server.process.stop();
    }
  });
});
