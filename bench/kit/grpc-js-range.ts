/**
 * `npm run test:grpc-js-range`: the grpc-js transport's tests, run again against each
 * @grpc/grpc-js of GRPC_JS_RELEASES (./tools.ts) and the newest release of the peer range.
 * `npm test` runs them against node_modules' grpc-js (the lockfile's); the transport's guards
 * wrap private members of grpc-js's Server, which a release may change within the range, so
 * CI (.ci/run) runs this as a step of its own. Each release is installed once into .tools/
 * (./tools.ts, ensureGrpcJs); test/server/fixtures/grpc-js-version.mjs points every import
 * of @grpc/grpc-js in the test processes at it. Programs the tests start (`jwt-grpc serve`)
 * keep node_modules' grpc-js: child environments drop NODE_OPTIONS (./exec.ts).
 */
import { readFileSync } from 'node:fs';
import { type ParsedCommandLine, parseFlags, parseList, runProgram } from './program.js';
import { repoPath } from './paths.js';
import { captureOutput, runCommand } from './exec.js';
import { GRPC_JS_RELEASES, ensureGrpcJs } from './tools.js';

/**
 * The grpc-js transport's tests: its guards over real connections (memory, deadlines,
 * handshake and connection cap, stream resets), the adapter, health and reflection served by
 * it, and addJwtService on a user's grpc-js Server, which uses only grpc-js's public API.
 */
export const GRPC_JS_TRANSPORT_TESTS = [
  'test/server/grpc-js-guards.test.ts',
  'test/server/grpc-js-connections.test.ts',
  'test/server/grpc-js-memory.test.ts',
  'test/server/channel-options.test.ts',
  'test/server/lifecycle.test.ts',
  'test/reflection/health.test.ts',
  'test/reflection/reflection.test.ts',
  'test/transport/grpc-js.test.ts',
  'test/jwt-service/add.test.ts',
  'test/transport/zero-window.integration.test.ts',
  'test/server/peer-deadlines.integration.test.ts',
  'test/server/handshake.integration.test.ts',
  'test/reliability/disconnect.integration.test.ts',
] as const;

const HOOK = repoPath('test', 'server', 'fixtures', 'grpc-js-version.mjs');

const HELP = `Usage: npm run test:grpc-js-range [-- --versions 1.10.0,1.13.7]

Runs the grpc-js transport's tests (${GRPC_JS_TRANSPORT_TESTS.length} files) against each
@grpc/grpc-js release of the peer range that changed what the transport's guards wrap
(${GRPC_JS_RELEASES.join(', ')}) and the range's newest release, each installed once into
.tools/grpc-js-<version> (needs the npm registry the first time). node_modules' grpc-js is
\`npm test\`'s; the newest is skipped when it is that one.

Options:
  --versions LIST   these releases instead (comma-separated)

Exit status: 0 every release passed, 1 one failed or could not be installed, 2 bad option.
`;

interface RangeOptions {
  readonly versions: readonly string[] | undefined;
}

function parse(argv: readonly string[]): ParsedCommandLine<RangeOptions> {
  const values = parseFlags(argv, { versions: { type: 'string' } });
  if (values === 'help') return { kind: 'help' };
  return { kind: 'run', options: { versions: values.versions === undefined ? undefined : parseList('--versions', values.versions) } };
}

/** node_modules' grpc-js version, and the peer range package.json declares. */
function installed(): { readonly version: string; readonly range: string } {
  const read = (path: string): Record<string, unknown> => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  const version = read(repoPath('node_modules', '@grpc', 'grpc-js', 'package.json')).version as string;
  const range = (read(repoPath('package.json')).peerDependencies as Record<string, string>)['@grpc/grpc-js'] as string;
  return { version, range };
}

/** The releases to run: the pinned ones, and the range's newest unless node_modules has it. */
function releases(log: (line: string) => void): string[] {
  const { version, range } = installed();
  const newest = captureOutput('npm', ['view', `@grpc/grpc-js@${range}`, 'version', '--json'], { timeoutMs: 60_000 });
  if (newest === null) throw new Error(`npm view @grpc/grpc-js@'${range}' failed: is the npm registry reachable?`);
  const listed = JSON.parse(newest) as string | string[];
  const last = Array.isArray(listed) ? (listed.at(-1) as string) : listed;
  if (last === version) log(`${last}, the range's newest, is node_modules' grpc-js: \`npm test\` runs it`);
  return [...new Set([...GRPC_JS_RELEASES, ...(last === version ? [] : [last])])];
}

/** Runs the transport's tests against the grpc-js installed under `prefix`; true when they pass. */
function runAgainst(version: string, prefix: string, log: (line: string) => void): boolean {
  const env = { ...process.env, GRPC_JS_PREFIX: prefix, NODE_OPTIONS: `--import ${HOOK}` };
  // The hook must take: a run that tested node_modules' grpc-js would pass for the wrong one.
  const seen = captureOutput('node', ['-p', "require('@grpc/grpc-js/package.json').version"], { env, cwd: repoPath() });
  if (seen !== version) {
    log(`@grpc/grpc-js ${version}: the test processes would load ${seen ?? 'nothing'}, not it`);
    return false;
  }
  log(`@grpc/grpc-js ${version}: ${GRPC_JS_TRANSPORT_TESTS.length} files`);
  // forks, not the unit project's vmForks: vitest's VM contexts load packages past the hook.
  const vitest = runCommand('npx', ['vitest', 'run', '--pool=forks', ...GRPC_JS_TRANSPORT_TESTS], {
    env,
    cwd: repoPath(),
    inheritOutput: true,
    timeoutMs: 600_000,
  });
  return vitest.status === 0;
}

async function run(options: RangeOptions): Promise<number> {
  const log = (line: string): void => void process.stderr.write(`grpc-js-range: ${line}\n`);
  const versions = options.versions ?? releases(log);
  const failed: string[] = [];
  for (const version of versions) {
    if (!runAgainst(version, ensureGrpcJs(version, log), log)) failed.push(version);
  }
  log(failed.length === 0 ? `passed on @grpc/grpc-js ${versions.join(', ')}` : `failed on @grpc/grpc-js ${failed.join(', ')}`);
  return failed.length === 0 ? 0 : 1;
}

await runProgram({ name: 'grpc-js-range', url: import.meta.url, help: () => HELP, parse, run });
