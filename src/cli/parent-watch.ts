/**
 * A server started by `npx jwt-grpc serve` (or `npm exec`) ends with that launcher. npm runs
 * the bin in a shell (`sh -c jwt-grpc ...`) and passes SIGTERM to the shell, not to the bin:
 * the shell dies and the server, reparented, would go on listening after the npx it was
 * started with is gone. So such a server watches its parent and, once it is gone, stops the
 * way SIGTERM stops it (draining).
 *
 * Any other parent is left alone: a shell that exits after `nohup jwt-grpc serve &`, a
 * script's `setsid`, systemd or a container's init are not launchers whose end should end
 * the server. `--exit-with-parent` asks for the watch whatever the parent.
 */

/** How often the parent is checked; the check is one syscall. */
export const PARENT_CHECK_MS = 500;

/** The names the package's bin is run by: `npx jwt-grpc` runs the bin `jwt-grpc`. */
const BIN_NAME = 'jwt-grpc';

/**
 * Whether this process is the command an `npm exec` or `npx` ran. npm (7 and later) gives
 * the command it runs `npm_lifecycle_event=npx` and the command's own name in
 * `npm_lifecycle_script` (docs.npmjs.com, "npm exec" and "scripts": environment).
 * The environment, rather than the parent's command line, because it is what npm itself
 * documents, on every platform (there is no /proc on macOS, and npm's process title is no
 * interface); the script's name, because a shell run by npx passes the variables on to
 * whatever it starts (`npx bash`, then `nohup jwt-grpc serve &`): a bin run by a shell that
 * npx ran is not the one npx runs.
 *
 * @example
 * ```ts
 * launchedByNpmExec({ npm_lifecycle_event: 'npx', npm_lifecycle_script: 'jwt-grpc' }); // true
 * launchedByNpmExec({ npm_lifecycle_event: 'npx', npm_lifecycle_script: 'bash' }); // false
 * ```
 * @internal
 */
export function launchedByNpmExec(env: NodeJS.ProcessEnv): boolean {
  if (env['npm_lifecycle_event'] !== 'npx') return false;
  const command = (env['npm_lifecycle_script'] ?? '').trim().split(/\s+/)[0] ?? '';
  const name = command
    .replace(/^['"]|['"]$/g, '')
    .split(/[\\/]/)
    .at(-1);
  return name === BIN_NAME || name === `${BIN_NAME}.cmd`;
}

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
