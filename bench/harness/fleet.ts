/**
 * N `jwt-grpc serve` replicas on loopback sharing one key file, behind nginx with the
 * shipped configuration (nginx.ts): what deploy/ describes, on one machine, for the
 * deploy tests and the benchmark's nginx row. Every process is started by the launcher.
 */
import { type CliServer, serveArgs, startCli } from '../kit/cli.js';
import { type NginxProxy, startNginx } from './nginx.js';
import { freePort } from '../kit/ports.js';

export interface FleetOptions {
  readonly replicas: number;
  readonly keysFile: string;
  /** More flags of every replica's `serve`, after `--keys`. */
  readonly serveArgs?: readonly string[];
  /** Flags of node itself for every replica (e.g. `--max-semi-space-size=4`). */
  readonly nodeArgs?: readonly string[];
  /** CPUs every replica and nginx are pinned to; none: unpinned. */
  readonly cpus?: readonly number[];
  /**
   * Serve discovery too: every replica gets `--http-port 0` and `--issuer` set to the URL
   * nginx publishes the documents at, and nginx runs the shipped file's discovery part.
   * Default false (the benchmark's row: tokens without `iss`, as the other rows sign).
   */
  readonly discovery?: boolean;
}

/** The discovery documents through nginx. */
export interface FleetDiscovery {
  /** The public URL: every replica's `--issuer`, nginx's discovery listener. */
  readonly issuer: string;
  /** Each replica's own discovery port, in the order of `replicas`. */
  readonly replicaPorts: readonly number[];
}

export interface Fleet {
  readonly replicas: readonly CliServer[];
  readonly nginx: NginxProxy;
  /** With the `discovery` option. */
  readonly discovery: FleetDiscovery | undefined;
  /** SIGTERM to nginx and every replica (each drains), then the prefix of nginx is removed. */
  stop(): Promise<void>;
}

/** A replica's discovery port, from its banner line `discovery: http://HOST:PORT/.well-known/...`. */
function bannerHttpPort(replica: CliServer): number {
  const port = /^ {2}discovery: https?:\/\/[^\s]*?:(\d+)\//m.exec(replica.stdout)?.[1];
  if (port === undefined) throw new Error(`replica ${replica.pid} printed no discovery line:\n${replica.stdout}`);
  return Number(port);
}

/** Starts the replicas (one process each, NODEMAXPROCS=1) side by side, then nginx in front of them. */
export async function startFleet(options: FleetOptions): Promise<Fleet> {
  // The issuer names nginx's discovery port, so it is chosen before the replicas start.
  const discoveryPort = options.discovery === true ? await freePort() : undefined;
  const issuer = discoveryPort === undefined ? undefined : `http://127.0.0.1:${discoveryPort}`;
  const discoveryArgs = issuer === undefined ? [] : ['--http-port', '0', '--issuer', issuer];
  const started = await Promise.allSettled(
    Array.from({ length: options.replicas }, () =>
      startCli(serveArgs('--keys', options.keysFile, ...discoveryArgs, ...(options.serveArgs ?? [])), {
        env: { NODEMAXPROCS: '1' },
        nodeArgs: options.nodeArgs,
        cpus: options.cpus,
      }),
    ),
  );
  const replicas = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s) => s.status === 'rejected');
  let nginx: NginxProxy;
  let discovery: FleetDiscovery | undefined;
  try {
    if (failed !== undefined) throw failed.reason;
    if (issuer !== undefined && discoveryPort !== undefined) discovery = { issuer, replicaPorts: replicas.map(bannerHttpPort) };
    nginx = await startNginx(
      replicas.map((r) => r.port),
      {
        cpus: options.cpus,
        ...(discovery !== undefined &&
          discoveryPort !== undefined && { discovery: { upstreamPorts: discovery.replicaPorts, listenPort: discoveryPort } }),
      },
    );
  } catch (error) {
    for (const replica of replicas) replica.kill();
    throw error;
  }
  return {
    replicas,
    nginx,
    discovery,
    async stop() {
      await Promise.all([nginx.stop(), ...replicas.map((r) => r.stop())]);
      nginx.removeFiles();
    },
  };
}
