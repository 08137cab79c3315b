/**
 * Cleanups of an interrupted run (stop the server under test, delete the keys). The CLI
 * runs them on SIGINT/SIGTERM; a normal run unregisters each as its own `finally` has
 * already done the work.
 */
const cleanups = new Set<() => void>();

export function registerCleanup(cleanup: () => void): () => void {
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

export function runCleanups(): void {
  for (const cleanup of cleanups) {
    try {
      cleanup();
    } catch {
      // best effort: the process is exiting
    }
  }
  cleanups.clear();
}
