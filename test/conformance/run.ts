/**
 * `npm run test:conformance`: the Connect conformance suite (connectrpc.com/conformance, its
 * runner `connectconformance` pinned in bench/kit/tools.ts) against jwt-grpc's own
 * transport. The runner's reference client (connect-go) calls test/conformance/server.ts
 * with every case test/conformance/config.yaml selects and checks every answer. Exits with
 * the runner's status: 0 when every case passed (or is listed as known to fail, or to be flaky).
 *
 * Usage: node dist/test/conformance/run.js [connectconformance flags, e.g. --run PATTERN -v]
 * (CONFORMANCE_DEBUG=1 in the environment: the server logs to stderr what it refused or dropped)
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { repoPath } from '../../bench/kit/paths.js';
import { GO_TOOLS, ensureGoTool } from '../../bench/kit/tools.js';

const HERE = repoPath('test', 'conformance');
const SERVER = repoPath('dist', 'test', 'conformance', 'server.js');
const KNOWN_FAILING = repoPath('test', 'conformance', 'known-failing.txt');
const KNOWN_FLAKY = repoPath('test', 'conformance', 'known-flaky.txt');

// Installed here when missing (go install, once), as the benchmark installs ghz: this is not a test with a timeout.
const runner = ensureGoTool(GO_TOOLS.connectconformance, (line) => void process.stderr.write(`conformance: ${line}\n`));
const args = [
  '--mode',
  'server',
  '--conf',
  `${HERE}/config.yaml`,
  ...(existsSync(KNOWN_FAILING) ? ['--known-failing', `@${KNOWN_FAILING}`] : []),
  ...(existsSync(KNOWN_FLAKY) ? ['--known-flaky', `@${KNOWN_FLAKY}`] : []),
  ...process.argv.slice(2),
  '--',
  process.execPath,
  SERVER,
];
const run = spawnSync(runner, args, { stdio: 'inherit' });
process.exitCode = run.status ?? 1;
