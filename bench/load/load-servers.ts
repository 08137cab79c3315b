/**
 * The servers of the load sections: `jwt-grpc` and `go` of the macro table
 * (macro/servers.ts), one process each on the 1-core split, started afresh per section.
 */
import { SUBJECTS_FILE } from '../kit/paths.js';
import type { CorePlan } from '../harness/cores.js';
import type { ServerProcess } from '../kit/launcher.js';
import { SERVERS, startBenchServer } from '../macro/servers.js';
import { type CallCounter, metricsCounter, signalCounter } from './ok-count.js';

/** The two servers every load section compares: ours and the Go peer. */
export const LOAD_SERVERS = ['jwt-grpc', 'go'] as const;
export type LoadServerName = (typeof LOAD_SERVERS)[number];

/** What every load section shares. */
export interface LoadContext {
  readonly plan: CorePlan;
  readonly keysFile: string;
  /** Scratch files (h2load's body, ghz reports). */
  readonly scratchDir: string;
  readonly ghz: string;
  readonly log: (line: string) => void;
  /** Told about the servers running, so that an interrupted run can stop them. */
  readonly onServers: (servers: readonly ServerProcess[]) => void;
}

/** A started server, with its call counter when asked for one. */
export interface LoadServer {
  readonly name: LoadServerName;
  readonly process: ServerProcess;
  readonly counter: CallCounter | null;
}

/**
 * Starts one of {@link LOAD_SERVERS} on the 1-core split. `counting`: with the server's
 * own count of calls by status (ok-count.ts): jwt-grpc with `--metrics-port 0`, which
 * records metrics on every call (a small cost the h2load cells carry, said in the
 * summary), the Go peer with `--count-calls` (two atomic adds per call).
 */
export async function startLoadServer(ctx: LoadContext, name: LoadServerName, counting: boolean): Promise<LoadServer> {
  const spec = SERVERS.find((s) => s.name === name);
  if (spec === undefined) throw new Error(`no server ${name}`);
  const launch = spec.launch({ keysFile: ctx.keysFile, subjectsFile: SUBJECTS_FILE, workers: 1 });
  const extra = !counting ? [] : name === 'go' ? ['--count-calls'] : ['--metrics-port', '0'];
  const process = await startBenchServer(spec, { ...launch, args: [...launch.args, ...extra] }, ctx.plan, ctx.plan.single.serverCpus);
  try {
    const counter = !counting ? null : name === 'go' ? signalCounter(process) : await metricsCounter(process, 'GenerateJwt');
    return { name, process, counter };
  } catch (error) {
    await process.stop();
    throw error;
  }
}
