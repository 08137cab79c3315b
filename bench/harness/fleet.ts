/**
 * N `jwt-grpc serve` replicas on loopback sharing one key file, behind nginx with the
 * shipped configuration (nginx.ts): what deploy/ describes, on one machine, for the
 * deploy tests and the benchmark's nginx row. Every process is started by the launcher.
 */
import { type CliServer, serveArgs, startCli } from '../kit/cli.js';
import { type NginxProxy, startNginx } from './nginx.js';

export interface FleetOptions {
  readonly replicas: number;
  readonly keysFile: string;
  /** More flags of every replica's `serve`, after `--keys`. */
  readonly serveArgs?: readonly string[];
  /** Flags of node itself for every replica (e.g. `--max-semi-space-size=4`). */
  readonly nodeArgs?: readonly string[];
  /** CPUs every replica and nginx are pinned to; none: unpinned. */
  readonly cpus?: readonly number[];
}

export interface Fleet {
  readonly replicas: readonly CliServer[];
  readonly nginx: NginxProxy;
  /** SIGTERM to nginx and every replica (each drains), then the prefix of nginx is removed. */
  stop(): Promise<void>;
}

/** Starts the replicas (one process each, NODEMAXPROCS=1) side by side, then nginx in front of them. */
export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const started = await Promise.allSettled(
    Array.from({ length: options.replicas }, () =>
      startCli(serveArgs('--keys', options.keysFile, ...(options.serveArgs ?? [])), {
        env: { NODEMAXPROCS: '1' },
        nodeArgs: options.nodeArgs,
        cpus: options.cpus,
      }),
    ),
  );
  const replicas = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s) => s.status === 'rejected');
  let nginx: NginxProxy;
  try {
    if (failed !== undefined) throw failed.reason;
    nginx = await startNginx(
      replicas.map((r) => r.port),
      { cpus: options.cpus },
    );
  } catch (error) {
    for (const replica of replicas) replica.kill();
    throw error;
  }
  return {
    replicas,
    nginx,
    async stop() {
      await Promise.all([nginx.stop(), ...replicas.map((r) => r.stop())]);
      nginx.removeFiles();
    },
  };
}
