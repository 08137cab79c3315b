/**
 * What every figure of a run must carry to be read alone: the machine, the date, and what
 * the load notation of the scenario labels (`HS256 1c 1x50`, `N=2 2x100`, `2w/1c`) means.
 * The charts put these under their titles, the verdict names them; both read results.json
 * only, so a past run gets the same text.
 */
import type { MachineInfo } from '../common/machine.js';
import type { Scenario } from '../macro/scenarios.js';

/** The part of results.json this file reads. */
export interface RunContextInput {
  readonly startedAt: string;
  readonly machine: MachineInfo;
  readonly options: { readonly label: string | null; readonly profile: string };
  readonly macro: { readonly scenarios: readonly Scenario[] } | null;
}

/**
 * `2026-11-27 11:39 UTC` from an ISO timestamp: minutes are as precise as a run's date
 * needs, and UTC is what results.json records.
 */
export function runDate(startedAt: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(startedAt);
  return match === null ? startedAt : `${match[1]} ${match[2]} UTC`;
}

/**
 * The machine in one phrase: the run's label first where it has one, then what the
 * machine reported, e.g. `2-vCPU AMD EPYC VM, quiet: AMD EPYC, 2 of 2 CPUs, virtual machine`.
 */
export function machinePhrase(input: RunContextInput): string {
  const { machine, options } = input;
  const cpus = `${machine.availableCpus} of ${machine.logicalCpus} CPUs${machine.virtualized ? ', virtual machine' : ''}`;
  return `${options.label == null ? '' : `${options.label}: `}${machine.cpuModel}, ${cpus}`;
}

/**
 * The load notation of the scenario labels the run has, e.g. `1c = server on 1 core;
 * 1x50 = 1 connection × 50 calls in flight (ghz, closed loop)`. Each core group is
 * spelled out once (scenarios.ts writes `1c`, `N=n` and `Ww/Nc`); null for a run without
 * the ghz section, whose charts carry no such label.
 *
 * @example
 * ```ts
 * loadNotation(results.macro?.scenarios ?? []);
 * // 'Load: 1c = server on 1 core; 1x50 = 1 connection × 50 calls in flight (ghz, closed loop)'
 * ```
 */
export function loadNotation(scenarios: readonly Scenario[]): string | null {
  if (scenarios.length === 0) return null;
  const groups = new Map<string, string>();
  for (const s of scenarios) {
    if (s.group === 'single') groups.set('1c', '1c = server on 1 core');
    else if (s.workers === s.serverCores)
      groups.set(`N=${s.serverCores}`, `N=${s.serverCores} = ${s.serverCores} server cores, ${s.workers} worker processes`);
    else
      groups.set(
        `${s.workers}w/${s.serverCores}c`,
        `${s.workers}w/${s.serverCores}c = ${s.workers} worker processes on ${s.serverCores} core${s.serverCores === 1 ? '' : 's'}`,
      );
  }
  const example = scenarios[0] as Scenario;
  const shape = `${example.connections}x${example.concurrency} = ${example.connections} connection${example.connections === 1 ? '' : 's'} × ${example.concurrency} calls in flight (ghz, closed loop)`;
  return `Load: ${[...groups.values(), shape].join('; ')}`;
}

/** The lines every chart carries under its title: the machine and date, then the load notation where the run has one. */
export function chartContextLines(input: RunContextInput): string[] {
  const lines = [`${machinePhrase(input)} · run of ${runDate(input.startedAt)}, profile ${input.options.profile}`];
  const notation = loadNotation(input.macro?.scenarios ?? []);
  if (notation !== null) lines.push(notation);
  return lines;
}
