/**
 * A fixed-rate HTTP load beside a cell's gRPC calls: h2load GETting the server's JWK Set
 * at a set number of requests per second, on the load generator's CPUs, for as long as
 * one measurement lasts. The server's CPU answering it counts as the server's, so the
 * gRPC calls' CPU per call with the load against without it is what that load costs them.
 */
import { type CorePlan, pinnedCommand } from '../harness/cores.js';
import { type LaunchedProcess, launch } from '../kit/launcher.js';

/** A background load of a row: GETs of the JWK Set, `rps` a second in all. */
export interface BackgroundLoad {
  readonly kind: 'jwks';
  readonly rps: number;
}

/** h2load's clients for a rate-limited load: each sends `rps / clients` requests a second (h2load's `--rps` is per client). */
export const BACKGROUND_CLIENTS = 10;

/** The discovery server's port, from `serve`'s start lines (`  discovery: http://127.0.0.1:PORT/...`). */
export function discoveryPort(stdout: string): number | null {
  const match = /discovery: https?:\/\/[^/\s]*:(\d+)\//.exec(stdout);
  return match === null ? null : Number(match[1]);
}

/** h2load's arguments: HTTP/1.1, `clients` connections, `rps / clients` requests a second each, for `durationS`. */
export function backgroundLoadArgs(load: BackgroundLoad, port: number, durationS: number): string[] {
  return [
    '--h1',
    '-c',
    String(BACKGROUND_CLIENTS),
    `--rps=${Math.max(1, Math.round(load.rps / BACKGROUND_CLIENTS))}`,
    '-D',
    String(Math.ceil(durationS)),
    `http://127.0.0.1:${port}/.well-known/jwks.json`,
  ];
}

/**
 * Starts the load (pinned to `loadCpus`); the caller kills it once its measurement ends.
 * It runs `durationS` plus a margin so that it never stops before the measurement does.
 */
export function startBackgroundLoad(
  h2load: string,
  load: BackgroundLoad,
  port: number,
  durationS: number,
  plan: CorePlan,
  loadCpus: readonly number[],
): LaunchedProcess {
  const { command, args } = pinnedCommand(plan, loadCpus, h2load, backgroundLoadArgs(load, port, durationS + 30));
  return launch(command, args);
}
