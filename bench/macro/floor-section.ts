/**
 * summary.md's "ES256 against OpenSSL's floor": every server's CPU per ES256 GenerateJwt
 * (one sign and one verify of the issued token, as the Go peer does) divided by what OpenSSL's own
 * P-256 costs for the same two operations on the server's core, in the same run
 * (harness/openssl-floor.ts), round by round: each round's CPU per call over the floor read
 * just before that round, the median of those ratios with its bootstrap interval, as the
 * tables' other ratios. Issue 34's target: ours ≤ {@link FLOOR_TARGET} x the floor.
 */
import { markdownTable } from '../common/markdown.js';
import { type MedianInterval, bootstrapMedian, seedFor } from '../common/median-interval.js';
import type { OpensslFloor } from '../harness/openssl-floor.js';
import type { CellResult, MacroResults } from './results.js';
import type { Scenario } from './scenarios.js';

/** The target of ours: ES256 CPU per call at most this many times the floor. */
export const FLOOR_TARGET = 1.3;

/** One server's ES256 CPU per call against the floor: µs, median (min-max) of its rounds, and the median of its per-round ratios with their interval. */
export interface FloorRatio {
  readonly scenario: string;
  readonly server: string;
  readonly role: string;
  readonly cpuUs: { readonly median: number; readonly min: number; readonly max: number };
  /** Each round's CPU per call over the floor read before that round (the run's floor where a round has none). */
  readonly ratio: MedianInterval;
}

/** The scenarios measured against the floor: ES256 GenerateJwt on one server core. */
export function isFloorScenario(scenario: Pick<Scenario, 'algorithm' | 'method' | 'group'>): boolean {
  return scenario.algorithm === 'ES256' && scenario.method === 'GenerateJwt' && scenario.group === 'single';
}

/** Sign + verify of the reading taken before `round` of `scenario`, or the run's floor without one. */
function floorOfRound(floor: OpensslFloor, scenario: string, round: number): number {
  const reading = floor.readings.find((r) => r.round?.scenario === scenario && r.round.round === round);
  return reading === undefined ? floor.callUs : reading.signUs + reading.verifyUs;
}

/** The ratios of every measured cell of the ES256 GenerateJwt scenarios on one server core. */
export function floorRatios(results: Pick<MacroResults, 'scenarios' | 'servers' | 'cells'>, floor: OpensslFloor): FloorRatio[] {
  if (floor.skipped !== null || !(floor.callUs > 0)) return [];
  const scenarios = results.scenarios.filter(isFloorScenario);
  const measured = (c: CellResult): boolean => c.aggregate !== null && scenarios.some((s) => s.id === c.scenario);
  return results.cells.filter(measured).flatMap((cell) => {
    const cpu = (cell.aggregate as NonNullable<CellResult['aggregate']>).serverCpuUsPerRequest;
    const role = results.servers.find((s) => s.name === cell.server)?.role ?? 'variant';
    const ratios = cell.rounds
      .filter((r) => Number.isFinite(r.serverCpuUsPerRequest))
      .map((r) => r.serverCpuUsPerRequest / floorOfRound(floor, cell.scenario, r.round));
    // A cell whose CPU could not be read in any round has no ratio to give.
    if (ratios.length === 0) return [];
    return [
      {
        scenario: cell.scenario,
        server: cell.server,
        role,
        cpuUs: { median: cpu.median, min: cpu.min, max: cpu.max },
        ratio: bootstrapMedian(ratios, seedFor(`floor/${cell.scenario}/${cell.server}`)),
      },
    ];
  });
}

const x = (n: number): string => `${n.toFixed(2)}x`;
const us = (n: number): string => n.toFixed(1);

/** The section, or null when no floor was asked for. */
export function floorSection(results: MacroResults): string | null {
  const floor = results.opensslFloor;
  if (floor === undefined) return null;
  const title = "### ES256 against OpenSSL's floor (server CPU per GenerateJwt / OpenSSL P-256 sign + verify)";
  if (floor.skipped !== null) return `${title}\n\nNot measured: ${floor.skipped}.`;
  const range = (values: readonly number[]): string => `${us(Math.min(...values))}-${us(Math.max(...values))}`;
  const perRound = floor.readings.filter((r) => r.round !== undefined).length;
  const rows = floorRatios(results, floor).map((r) => [
    r.role === 'ours' ? `**${r.server}**` : r.server,
    r.scenario,
    `${us(r.cpuUs.median)} (${us(r.cpuUs.min)}-${us(r.cpuUs.max)})`,
    r.ratio.low === null || r.ratio.high === null
      ? `${x(r.ratio.median)} (${r.ratio.n} round${r.ratio.n === 1 ? '' : 's'}: no interval)`
      : `${x(r.ratio.median)} (${x(r.ratio.low)}-${x(r.ratio.high)})`,
    r.role === 'ours' ? (r.ratio.median <= FLOOR_TARGET ? `met (≤ ${FLOOR_TARGET}x)` : `not met (> ${FLOOR_TARGET}x)`) : '',
  ]);
  return [
    title,
    `Floor: ${us(floor.callUs)} µs per call, the median of ${floor.readings.length} reading(s) (${perRound} of them before a round of an ES256 cell, ` +
      `the others before and after the columns): sign ${range(floor.readings.map((r) => r.signUs))} + verify ${range(floor.readings.map((r) => r.verifyUs))} µs; ` +
      `${floor.version}, \`${floor.command}\` (CPU time per operation, as the servers' CPU per call). ` +
      "CPU per call: median (min-max) of the server's rounds. x floor: the median of its per-round ratios, each round's CPU per call over the floor read just before that round, with its 95 % bootstrap interval.",
    rows.length === 0
      ? 'No ES256 GenerateJwt cell on one server core was measured.'
      : markdownTable(['server', 'scenario', 'CPU µs per call', 'x floor', `target ≤ ${FLOOR_TARGET}x`], rows),
  ].join('\n\n');
}
