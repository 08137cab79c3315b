/**
 * summary.md's "ES256 against OpenSSL's floor": every server's CPU per ES256 GenerateJwt
 * (one sign and one verify of the issued token, as the Go peer does) divided by what OpenSSL's own
 * P-256 costs for the same two operations on the server's core, in the same run
 * (harness/openssl-floor.ts), round by round: each round's CPU per call over the floor read
 * just before that round, the median of those ratios with its bootstrap interval, as the
 * tables' other ratios. Issue 34's target: ours ≤ {@link FLOOR_TARGET} x the floor.
 *
 * Beside it, node:crypto alone (harness/node-crypto-floor.ts): the same two operations in a
 * loop on the same core, read after each floor reading. Its ratio to the floor is what Node's
 * crypto costs before any server code runs; each server's CPU per call over that reading (the
 * `x node:crypto` column) is what the server adds around it.
 */
import { markdownTable } from '../common/markdown.js';
import { type MedianInterval, bootstrapMedian, seedFor } from '../common/median-interval.js';
import { median } from '../common/stats.js';
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
  /** Each round's CPU per call over node:crypto's reading before that round; null where node:crypto was not read. */
  readonly overNode: MedianInterval | null;
}

/** node:crypto alone against the floor: its sign + verify per reading, and the per-reading ratio. */
export interface NodeCryptoFloor {
  readonly callUs: { readonly median: number; readonly min: number; readonly max: number };
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

/** node:crypto's sign + verify of each reading that has it. */
function nodeCalls(floor: OpensslFloor): number[] {
  return floor.readings.flatMap((r) => (r.node === undefined ? [] : [r.node.signUs + r.node.verifyUs]));
}

/** node:crypto's sign + verify read before `round` of `scenario`, else the median of the run's; NaN where none was read. */
function nodeOfRound(floor: OpensslFloor, scenario: string, round: number): number {
  const node = floor.readings.find((r) => r.round?.scenario === scenario && r.round.round === round)?.node;
  if (node !== undefined) return node.signUs + node.verifyUs;
  const calls = nodeCalls(floor);
  return calls.length === 0 ? Number.NaN : median(calls);
}

/** node:crypto alone against the floor, or null where no reading has it. */
export function nodeCryptoFloor(floor: OpensslFloor): NodeCryptoFloor | null {
  if (floor.skipped !== null) return null;
  const ratios = floor.readings.flatMap((r) => (r.node === undefined ? [] : [(r.node.signUs + r.node.verifyUs) / (r.signUs + r.verifyUs)]));
  if (ratios.length === 0) return null;
  const calls = nodeCalls(floor);
  return {
    callUs: { median: median(calls), min: Math.min(...calls), max: Math.max(...calls) },
    ratio: bootstrapMedian(ratios, seedFor('floor/node-crypto')),
  };
}

/** The ratios of every measured cell of the ES256 GenerateJwt scenarios on one server core. */
export function floorRatios(results: Pick<MacroResults, 'scenarios' | 'servers' | 'cells'>, floor: OpensslFloor): FloorRatio[] {
  if (floor.skipped !== null || !(floor.callUs > 0)) return [];
  const scenarios = results.scenarios.filter(isFloorScenario);
  const measured = (c: CellResult): boolean => c.aggregate !== null && scenarios.some((s) => s.id === c.scenario);
  return results.cells.filter(measured).flatMap((cell) => {
    const cpu = (cell.aggregate as NonNullable<CellResult['aggregate']>).serverCpuUsPerRequest;
    const role = results.servers.find((s) => s.name === cell.server)?.role ?? 'variant';
    const rounds = cell.rounds.filter((r) => Number.isFinite(r.serverCpuUsPerRequest));
    const ratios = rounds.map((r) => r.serverCpuUsPerRequest / floorOfRound(floor, cell.scenario, r.round));
    const overNode = rounds.map((r) => r.serverCpuUsPerRequest / nodeOfRound(floor, cell.scenario, r.round)).filter(Number.isFinite);
    // A cell whose CPU could not be read in any round has no ratio to give.
    if (ratios.length === 0) return [];
    return [
      {
        scenario: cell.scenario,
        server: cell.server,
        role,
        cpuUs: { median: cpu.median, min: cpu.min, max: cpu.max },
        ratio: bootstrapMedian(ratios, seedFor(`floor/${cell.scenario}/${cell.server}`)),
        overNode: overNode.length === 0 ? null : bootstrapMedian(overNode, seedFor(`floor/node/${cell.scenario}/${cell.server}`)),
      },
    ];
  });
}

const x = (n: number): string => `${n.toFixed(2)}x`;
const us = (n: number): string => n.toFixed(1);

/** A median ratio with its interval, or with the reason it has none: too few of `unit` (rounds, readings). */
function ratioText(ratio: MedianInterval, unit = 'round'): string {
  return ratio.low === null || ratio.high === null
    ? `${x(ratio.median)} (${ratio.n} ${unit}${ratio.n === 1 ? '' : 's'}: no interval)`
    : `${x(ratio.median)} (${x(ratio.low)}-${x(ratio.high)})`;
}

/** What the section says of node:crypto alone: its row's cells, and the sentence under the table. */
function nodeCryptoParts(floor: OpensslFloor): { row: string[] | null; text: string } {
  const node = nodeCryptoFloor(floor);
  if (node === null) return { row: null, text: `node:crypto alone: not measured (${floor.nodeSkipped ?? 'no reading'}).` };
  const left = (FLOOR_TARGET - node.ratio.median) * floor.callUs;
  return {
    row: [
      'node:crypto alone (no server)',
      'sign + verify loop',
      `${us(node.callUs.median)} (${us(node.callUs.min)}-${us(node.callUs.max)})`,
      ratioText(node.ratio, 'reading'),
      '1.00x',
      '',
    ],
    text:
      `node:crypto alone: \`crypto.sign\` and \`crypto.verify\` of P-256 over a token-sized input in a loop, on the same core, read after each floor reading (\`${floor.nodeCommand}\`): ` +
      `no server can spend less on Node. At its median ratio the ${FLOOR_TARGET}x target leaves ${us(left)} µs a call for everything else a server does. ` +
      "x node:crypto: the median of each round's CPU per call over the node:crypto reading before that round: what the server adds around Node's crypto." +
      (floor.nodeSkipped === null ? '' : ` Some readings lack it: ${floor.nodeSkipped}.`),
  };
}

/** The section, or null when no floor was asked for. */
export function floorSection(results: MacroResults): string | null {
  const floor = results.opensslFloor;
  if (floor === undefined) return null;
  const title = "### ES256 against OpenSSL's floor (server CPU per GenerateJwt / OpenSSL P-256 sign + verify)";
  if (floor.skipped !== null) return `${title}\n\nNot measured: ${floor.skipped}.`;
  const range = (values: readonly number[]): string => `${us(Math.min(...values))}-${us(Math.max(...values))}`;
  const perRound = floor.readings.filter((r) => r.round !== undefined).length;
  const node = nodeCryptoParts(floor);
  const servers = floorRatios(results, floor).map((r) => [
    r.role === 'ours' ? `**${r.server}**` : r.server,
    r.scenario,
    `${us(r.cpuUs.median)} (${us(r.cpuUs.min)}-${us(r.cpuUs.max)})`,
    ratioText(r.ratio),
    r.overNode === null ? '-' : ratioText(r.overNode),
    r.role === 'ours' ? (r.ratio.median <= FLOOR_TARGET ? `met (≤ ${FLOOR_TARGET}x)` : `not met (> ${FLOOR_TARGET}x)`) : '',
  ]);
  const rows = servers.length === 0 || node.row === null ? servers : [...servers, node.row];
  return [
    title,
    `Floor: ${us(floor.callUs)} µs per call, the median of ${floor.readings.length} reading(s) (${perRound} of them before a round of an ES256 cell, ` +
      `the others before and after the columns): sign ${range(floor.readings.map((r) => r.signUs))} + verify ${range(floor.readings.map((r) => r.verifyUs))} µs; ` +
      `${floor.version}, \`${floor.command}\` (CPU time per operation, as the servers' CPU per call). ` +
      "CPU per call: median (min-max) of the server's rounds. x floor: the median of its per-round ratios, each round's CPU per call over the floor read just before that round, with its 95 % bootstrap interval.",
    node.text,
    servers.length === 0
      ? 'No ES256 GenerateJwt cell on one server core was measured.'
      : markdownTable(['server', 'scenario', 'CPU µs per call', 'x floor', 'x node:crypto', `target ≤ ${FLOOR_TARGET}x`], rows),
  ].join('\n\n');
}
