/**
 * npm run bench:accept, briefly: every way of accepting reaches every worker, node:cluster's
 * round-robin and jwt-grpc's hand-off spread W connections opened at once over W workers
 * every time, and with
 * reusePort the primary accepts nothing (its CPU per connection is the round-robin
 * primary's cost that reusePort removes). Needs the built dist/ (the children run from it).
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { repoPath } from '../../bench/kit/paths.js';
import { UsageError } from '../../bench/kit/program.js';
import { acceptTable, parseAcceptCommandLine, runAcceptRate } from '../../bench/cores/accept-rate.js';

describe('bench:accept', () => {
  it('measures new connections through the primaries and through reusePort workers', { timeout: 60_000 }, async () => {
    expect(existsSync(repoPath('dist', 'bench', 'cores', 'accept-server.js')), 'dist/ missing: run npm run build').toBe(true);
    const rounds = await runAcceptRate({ serverCores: null, workers: 2, seconds: 1, rounds: 1, connections: 4 }, () => undefined);
    const byMode = new Map(rounds.map((r) => [r.mode, r]));
    const roundRobin = byMode.get('round-robin');
    const reusePort = byMode.get('reuseport');
    const handOff = byMode.get('hand-off');
    if (roundRobin === undefined || reusePort === undefined || handOff === undefined) throw new Error('a mode is missing');
    for (const r of [roundRobin, reusePort, handOff]) {
      expect(r.errors, r.mode).toEqual({});
      expect(r.perWorker, r.mode).toHaveLength(2);
      for (const n of r.perWorker) expect(n, `${r.mode}: every worker answers`).toBeGreaterThan(0);
    }
    expect(roundRobin.evenShare).toBe(1);
    expect(handOff.evenShare).toBe(1);
    expect(roundRobin.primaryCpuUsPerConnection).toBeGreaterThan(reusePort.primaryCpuUsPerConnection);
    expect(handOff.primaryCpuUsPerConnection).toBeGreaterThan(reusePort.primaryCpuUsPerConnection);
    expect(acceptTable(rounds)).toMatch(/\| round-robin \| \d+ \(\d+-\d+\) \|[\s\S]*\| reuseport \|[\s\S]*\| hand-off \|/);
  });

  it('refuses a bad option with a message that names it', () => {
    expect(() => parseAcceptCommandLine(['--workers', '0'])).toThrow(UsageError);
    expect(() => parseAcceptCommandLine(['--workers', '0'])).toThrow(/--workers/);
    expect(parseAcceptCommandLine(['--rounds', '2'])).toEqual({
      kind: 'run',
      options: { serverCores: null, workers: null, seconds: 5, rounds: 2, connections: 32 },
    });
  });
});
