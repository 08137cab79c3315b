import { JwtGrpcError } from '../base/errors.js';
import type { KeySet } from '../keys/key-set.js';
import type { Logger } from '../base/log.js';
import type { JwtPolicy } from '../policy/document.js';

/**
 * A running server from {@link runCluster}, whatever the process's role.
 *
 * @example
 * ```ts
 * const handle: ClusterHandle = await runCluster({ workers: 2, address: '0.0.0.0:50051' });
 * if (handle.role !== 'worker') console.log(`port ${handle.port}, pids ${handle.servingPids().join(', ')}`);
 * process.exitCode = await handle.done;
 * ```
 */
export interface ClusterHandle {
  /** `single` (NODEMAXPROCS unset or 1), `primary` (forks the workers) or `worker`. */
  readonly role: 'single' | 'primary' | 'worker';
  /** The bound port, shared by every worker. */
  readonly port: number;
  /** The keys served now (in the primary, the ones handed to every worker). */
  readonly keys: KeySet;
  /**
   * Reads the keys again with the `keys` loader, checks them once (they must load, and
   * sign every algorithm signed now) and puts them in use: in this process, or in every
   * worker (calls in flight finish with the keys they started with). A failure changes
   * nothing: it is logged, counted in the metrics, and the promise rejects. SIGHUP does
   * this when `handleSignals` is on. In a worker it rejects: the primary reloads.
   */
  reloadKeys(): Promise<KeySet>;
  /** The issuance policy enforced now (in the primary, the one handed to every worker); undefined in open mode. */
  readonly policy: JwtPolicy | undefined;
  /**
   * Reads the policy again with the `policy` loader, checked once, and puts it in use: in
   * this process, or in every worker (each GenerateJwt reads the policy once, at its
   * start). A file that does not read, parse or pass the schema changes nothing: one
   * error line names the file, the JSON path and the problem, and the promise rejects.
   * SIGHUP does this too when `handleSignals` is on. In a worker it rejects: the primary reloads.
   */
  reloadPolicy(): Promise<JwtPolicy>;
  /** The port of `/metrics` (option `server.metricsPort`) in the process that serves it: the single one, or the primary. */
  readonly metricsPort: number | undefined;
  /** The discovery port (option `server.httpPort`), served by every worker; undefined without it. */
  readonly httpPort: number | undefined;
  /** Pids of the processes serving calls right now (this one, when single). */
  readonly servingPids: () => readonly number[];
  /** Drains: stops accepting, lets calls in flight finish, then resolves `done`. */
  close(): Promise<void>;
  /** Resolves to the exit code this process should end with once everything has stopped. */
  readonly done: Promise<number>;
}

/**
 * First SIGTERM/SIGINT drains, a second forces. Returns a function that removes the
 * listeners again.
 * @internal
 */
export function onStopSignals(drain: () => void, force: () => void): () => void {
  let received = 0;
  const handler = (): void => {
    received += 1;
    if (received === 1) drain();
    else force();
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
  return () => {
    process.off('SIGTERM', handler);
    process.off('SIGINT', handler);
  };
}

/** Why a key reload cannot happen: the server runs on ephemeral keys. @internal */
export function noKeyLoader(): JwtGrpcError {
  return new JwtGrpcError('ERR_SERVER_STATE', 'no key file to reload: the server runs on ephemeral keys (no keys option)');
}

/** Why a policy reload cannot happen: the server has no policy loader. @internal */
export function noPolicyLoader(): JwtGrpcError {
  return new JwtGrpcError('ERR_SERVER_STATE', 'no policy file to reload: the server was started without the policy option');
}

/** What SIGHUP reloads: the keys with a key file, the policy with a policy file. @internal */
export interface Reloads {
  readonly keys: (() => Promise<unknown>) | undefined;
  readonly policy: (() => Promise<unknown>) | undefined;
}

/**
 * SIGHUP reloads the keys and the policy (its default would end the process), each on its
 * own: a broken policy file does not hold back new keys, nor the reverse. Each outcome is
 * logged by its reload; with neither file, a warning says there is nothing to reload.
 * Returns a function that removes the listener again. @internal
 */
export function onReloadSignal(reloads: Reloads, logger: Logger): () => void {
  const handler = (): void => {
    if (reloads.keys === undefined && reloads.policy === undefined) {
      logger.warn('SIGHUP: nothing to reload (the server runs on ephemeral keys, without a policy file)');
      return;
    }
    const what = [reloads.keys === undefined ? [] : ['the keys'], reloads.policy === undefined ? [] : ['the policy']].flat().join(' and ');
    logger.info(`SIGHUP: reloading ${what}`);
    reloads.keys?.().catch(() => undefined); // logged and counted by the reload
    reloads.policy?.().catch(() => undefined); // logged by the reload
  };
  process.on('SIGHUP', handler);
  return () => process.off('SIGHUP', handler);
}

/**
 * The `done` of a ClusterHandle and the function that settles it with the exit code
 * (the first call wins). @internal
 */
export function exitLatch(): { readonly done: Promise<number>; readonly finish: (code: number) => void } {
  let finish!: (code: number) => void;
  const done = new Promise<number>((resolve) => (finish = resolve));
  return { done, finish };
}
