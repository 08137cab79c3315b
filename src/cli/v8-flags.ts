/**
 * The V8 settings `jwt-grpc serve` runs with unless the user chose their own.
 *
 * Node sizes V8's young generation from the machine's memory, so on a large machine the
 * semi-spaces are tens of MiB; a gRPC server's short-lived garbage then fills them
 * between scavenges and raises its peak RSS. A small semi-space trades a little CPU for a
 * much lower peak (bench/PERFORMANCE.md, "Memory for speed", has the measured numbers). V8 reads the setting when the process starts: `v8.setFlagsFromString`
 * later changes nothing, so the command replaces its own process image (`process.execve`,
 * same pid, same stdio) with one started with the flag, before it does anything else.
 * Cluster workers inherit it through `process.execArgv`.
 */

/** What `serve` adds to node's own flags. */
export const SERVE_V8_FLAGS: readonly string[] = ['--max-semi-space-size=4'];

/** True when the user set the young generation already (flags, or NODE_OPTIONS): theirs wins. */
function userChoseYoungGeneration(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  const chosen = (flag: string): boolean => /^--(max-semi-space-size|semi-space-growth-factor)(=|$)/.test(flag);
  return execArgv.some(chosen) || (nodeOptions ?? '').split(/\s+/).some(chosen);
}

/**
 * Restarts this process with {@link SERVE_V8_FLAGS} when the command is `serve` and the
 * user did not set them; returns when there is nothing to do or it cannot (Node older
 * than 22.15 has no `process.execve`; Windows has none), and under Bun, whose engine
 * (JavaScriptCore) has no V8 flags: restarting it would only cost a start.
 */
export function execWithServeV8Flags(): void {
  if (process.argv[2] !== 'serve' || process.versions['bun'] !== undefined) return;
  if (userChoseYoungGeneration(process.execArgv, process.env['NODE_OPTIONS'])) return;
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never }).execve;
  if (typeof execve !== 'function' || process.platform === 'win32') return;
  execve(process.execPath, [process.execPath, ...SERVE_V8_FLAGS, ...process.execArgv, ...process.argv.slice(1)], process.env);
}
