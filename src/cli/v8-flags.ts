/**
 * The V8 settings `jwt-grpc serve` gives its cluster workers unless the user chose their own.
 *
 * Node sizes V8's young generation from the machine's memory, so on a large machine the
 * semi-spaces are tens of MiB; a gRPC server's short-lived garbage then fills them
 * between scavenges and raises its peak RSS. A small semi-space trades a little CPU for a
 * lower peak (bench/PERFORMANCE.md, "Memory for speed": on jwt-grpc's own transport 91
 * against 125 MiB at HS256, 1-3 % more CPU per call). V8 reads the setting when a process
 * starts, so it is given where a process starts anyway: to each cluster worker as it is
 * forked. A single process is not restarted for it: that was a second Node start, 30-40 ms
 * of every `serve` on one core, for 34 MiB of peak memory at 1x50 and ~130 MiB under 500
 * connections x 1,000 in flight (docs/cli.md, "Memory"). The image and
 * the Kubernetes Deployment set it through NODE_OPTIONS; so can anyone (docs/cli.md, "Memory").
 */
import cluster from 'node:cluster';

/** What `serve` adds to node's own flags for its cluster workers. */
export const SERVE_V8_FLAGS: readonly string[] = ['--max-semi-space-size=4'];

/** True when the user set the young generation already (flags, or NODE_OPTIONS): theirs wins. */
function userChoseYoungGeneration(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  const chosen = (flag: string): boolean => /^--(max-semi-space-size|semi-space-growth-factor)(=|$)/.test(flag);
  return execArgv.some(chosen) || (nodeOptions ?? '').split(/\s+/).some(chosen);
}

/**
 * Makes the cluster workers this process forks from now on start with {@link SERVE_V8_FLAGS}
 * before node's own flags, unless the user chose a young-generation setting. Not under Bun,
 * whose engine (JavaScriptCore) has no V8 flags.
 */
export function giveWorkersServeV8Flags(): void {
  if (process.versions['bun'] !== undefined) return;
  if (userChoseYoungGeneration(process.execArgv, process.env['NODE_OPTIONS'])) return;
  cluster.setupPrimary({ execArgv: [...SERVE_V8_FLAGS, ...process.execArgv] });
}
