import type { KeySet } from '../keys/key-set.js';
import { type JwtServer, createJwtServer, createWorkerJwtServer } from '../server/create.js';
import type { HandedPorts } from '../base/handed-port.js';
import type { JwtServerOptions } from '../server/options.js';
import { exitLatch } from './handle.js';
import type { ResolvedClusterOptions } from './options.js';

/** A server listening in this process, with the `done` and `close` of its ClusterHandle. @internal */
export interface InProcessServer {
  readonly server: JwtServer;
  readonly port: number;
  readonly done: Promise<number>;
  /** Settles `done` with `code` (the first call wins). */
  readonly finish: (code: number) => void;
  /** Drains the server (default: the cluster's graceMs), then settles `done` with 0. */
  close(graceMs?: number): Promise<void>;
}

/**
 * The server of a single process or of one cluster worker: the two run exactly the same
 * server and differ only in where the keys come from, who tells them to stop, who
 * serves their metrics (`overrides`), and who holds their ports (`handed`: a worker's primary). @internal
 */
export async function listenInProcess(
  options: ResolvedClusterOptions,
  keys: KeySet | undefined,
  overrides: Omit<JwtServerOptions, 'keys' | 'logger'> = {},
  handed?: HandedPorts,
): Promise<InProcessServer> {
  const serverOptions: JwtServerOptions = { ...options.server, ...overrides, keys, logger: options.logger };
  const server = handed === undefined ? createJwtServer(serverOptions) : createWorkerJwtServer(serverOptions, handed);
  const tls = options.tls === undefined ? undefined : await options.tls();
  const port = await server.listen(options.address, tls);
  const { done, finish } = exitLatch();
  const close = (graceMs = options.graceMs): Promise<void> => server.close({ graceMs }).then(() => finish(0));
  return { server, port, done, finish, close };
}
