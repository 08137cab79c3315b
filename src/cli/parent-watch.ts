/**
 * A server started through a launcher (`npx`, `npm exec`, a shell script) ends with it.
 * `npm exec` passes SIGTERM to the shell it runs the bin in, not to the bin: the shell dies
 * and the server, reparented to init, would go on listening. So the process watches its
 * parent and, once it is gone, stops the way SIGTERM stops it (draining).
 */

/** How often the parent is checked; the check is one syscall. */
export const PARENT_CHECK_MS = 500;

/**
 * Sends this process SIGTERM once its parent has gone (its ppid changed). A process
 * started by init itself (ppid 1, e.g. PID 1's child in a container) has no launcher to
 * follow and is not watched. Returns a function that stops watching. @internal
 */
export function endWithParent(onGone: (parentPid: number) => void): () => void {
  const parentPid = process.ppid;
  if (parentPid <= 1) return () => {};
  const timer = setInterval(() => {
    if (process.ppid === parentPid) return;
    clearInterval(timer);
    onGone(parentPid);
    process.kill(process.pid, 'SIGTERM');
  }, PARENT_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
