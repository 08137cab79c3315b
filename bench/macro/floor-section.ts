/**
 * summary.md's "ES256 against OpenSSL's floor": every server's CPU per ES256 GenerateJwt
 * (one sign and one verify of the issued token, as the Go peer does) divided by what OpenSSL's own
 * P-256 costs for the same two operations on the server's core, in the same run
 * (harness/openssl-floor.ts). Issue 34's target: ours ≤ {@link FLOOR_TARGET} x the floor.
 */
import { markdownTable } from '../common/markdown.js';
import type { OpensslFloor } from '../harness/openssl-floor.js';
import type { CellResult, MacroResults } from './results.js';

/** The target of ours: ES256 CPU per call at most this many times the floor. */
export const FLOOR_TARGET = 1.3;

/** One server's ES256 CPU per call against the floor: median (min-max) of its rounds, µs and x floor. */
export interface FloorRatio {
  readonly scenario: string;
  readonly server: string;
  readonly role: string;
  readonly cpuUs: { readonly median: number; readonly min: number; readonly max: number };
  readonly ratio: { readonly median: number; readonly min: number; readonly max: number };
}

/** The ratios of every measured cell of the ES256 GenerateJwt scenarios on one server core. */
export function floorRatios(results: Pick<MacroResults, 'scenarios' | 'servers' | 'cells'>, floor: OpensslFloor): FloorRatio[] {
  if (floor.skipped !== null || !(floor.callUs > 0)) return [];
  const scenarios = results.scenarios.filter((s) => s.algorithm === 'ES256' && s.method === 'GenerateJwt' && s.group === 'single');
  const measured = (c: CellResult): boolean => c.aggregate !== null && scenarios.some((s) => s.id === c.scenario);
  return results.cells.filter(measured).map((cell) => {
    const cpu = (cell.aggregate as NonNullable<CellResult['aggregate']>).serverCpuUsPerRequest;
    const role = results.servers.find((s) => s.name === cell.server)?.role ?? 'variant';
    const over = (us: number): number => us / floor.callUs;
    return {
      scenario: cell.scenario,
      server: cell.server,
      role,
      cpuUs: { median: cpu.median, min: cpu.min, max: cpu.max },
      ratio: { median: over(cpu.median), min: over(cpu.min), max: over(cpu.max) },
    };
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
  const readings = floor.readings
    .map((r) => `sign ${us(r.signUs)} + verify ${us(r.verifyUs)} µs at ${(r.atMs / 1000).toFixed(0)} s`)
    .join('; ');
  const rows = floorRatios(results, floor).map((r) => [
    r.role === 'ours' ? `**${r.server}**` : r.server,
    r.scenario,
    `${us(r.cpuUs.median)} (${us(r.cpuUs.min)}-${us(r.cpuUs.max)})`,
    `${x(r.ratio.median)} (${x(r.ratio.min)}-${x(r.ratio.max)})`,
    r.role === 'ours' ? (r.ratio.median <= FLOOR_TARGET ? `met (≤ ${FLOOR_TARGET}x)` : `not met (> ${FLOOR_TARGET}x)`) : '',
  ]);
  return [
    title,
    `Floor: ${us(floor.callUs)} µs per call (median of ${floor.readings.length} reading(s): ${readings}), ${floor.version}, ` +
      `\`${floor.command}\` (CPU time per operation, as the servers' CPU per call). Each server's CPU per call: median (min-max) of its rounds.`,
    rows.length === 0
      ? 'No ES256 GenerateJwt cell on one server core was measured.'
      : markdownTable(['server', 'scenario', 'CPU µs per call', 'x floor', `target ≤ ${FLOOR_TARGET}x`], rows),
  ].join('\n\n');
}
