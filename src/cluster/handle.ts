import type { KeySet } from '../keys/key-set.js';

/** A running server from {@link runCluster}, whatever the process's role. */
export interface ClusterHandle {
  /** `single` (NODEMAXPROCS unset or 1), `primary` (forks the workers) or `worker`. */
  readonly role: 'single' | 'primary' | 'worker';
  /** The bound port, shared by every worker. */
  readonly port: number;
  /** The keys served (in the primary, the ones handed to every worker). */
  readonly keys: KeySet;
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
