/**
 * `npm run tools`: installs every pinned tool of tools.ts that is missing (ghz, grpcurl,
 * h2spec, the grpc-go interop client, the grpcio venv, Bun) and prints where each one is.
 * `npm test` runs it with --quiet before vitest, so that a fresh clone needs no other step
 * and no tool is downloaded inside a test's timeout; with everything there that is one line.
 */
import { type ParsedCommandLine, parseFlags, runProgram } from './program.js';
import { ensureH2load } from './h2load.js';
import { repoPath } from './paths.js';
import { cargoBuild } from './cargo-build.js';
import { goBuild } from './go-build.js';
import { BUN, GO_TOOLS, GRPCIO, ensureBun, ensureGoTool, ensureGrpcio } from './tools.js';

const HELP = `Usage: npm run tools      (or: node dist/bench/kit/install-tools.js)

Installs into .tools/, unless they are there already, at pinned versions, what the tests
and the benchmark need:
${Object.values(GO_TOOLS)
  .map((tool) => `  ${tool.name} ${tool.version}, with go install (needs Go and the Go module proxy)\n`)
  .join('')}  grpcio ${GRPCIO.grpcio} and protobuf ${GRPCIO.protobuf} in a Python venv, with pip (needs python3 and
  PyPI; without python3 it is skipped, and so is the grpcio test)
  ${BUN.name} ${BUN.version}, with npm (needs the npm registry; linux-x64 only, skipped elsewhere)
  h2load (the benchmark's second load generator), from PATH, else with apt-get install
  nghttp2-client where this runs as root with apt-get; otherwise skipped, and so are its cells
  the benchmark's Go and Rust peers and the tests' connect-go client, built in place (go build;
  cargo build --release --locked), so that a test or a run finds them built: the builds cache,
  a second is seconds

Options:
  --quiet   one line when every tool is there already; only installs are logged (npm test)

Exit status: 0 everything installed, 1 an installation failed, 2 bad option.
`;

interface InstallOptions {
  /** Log installs and skips only, then one summary line (what `npm test` prints). */
  readonly quiet: boolean;
}

function parse(argv: readonly string[]): ParsedCommandLine<InstallOptions> {
  const values = parseFlags(argv, { quiet: { type: 'boolean' } });
  return values === 'help' ? { kind: 'help' } : { kind: 'run', options: { quiet: values.quiet === true } };
}

async function install(options: InstallOptions): Promise<number> {
  const log = (line: string): void => void process.stderr.write(`tools: ${line}\n`);
  // Where each tool is: every line without --quiet, none with it (installs still log through `log`).
  const found = options.quiet ? (): void => {} : log;
  let count = 0;
  for (const tool of Object.values(GO_TOOLS)) {
    found(`${tool.name} ${tool.version}: ${ensureGoTool(tool, log)}`);
    count++;
  }
  const python = ensureGrpcio(log);
  if (python !== null) {
    found(`grpcio: ${python}`);
    count++;
  }
  const bun = ensureBun(log);
  if (bun !== null) {
    found(`${BUN.name} ${BUN.version}: ${bun}`);
    count++;
  }
  const h2load = ensureH2load(log);
  if (typeof h2load === 'string') {
    found(`h2load: ${h2load}`);
    count++;
  } else {
    log(h2load.skip);
  }
  count += buildPeers(log, found);
  if (options.quiet) log(`${count} pinned tools ready in .tools/ (\`npm run tools\` lists them)`);
  return 0;
}

/**
 * The peers the benchmark and its tests build on demand, built here once: a cold cargo build
 * of the Rust peer is about 2 minutes of CPU, which would otherwise land inside a test's
 * timeout (and inside `npm test`'s time). A peer that cannot be built is logged and skipped,
 * as the rows that need it are.
 */
function buildPeers(log: (line: string) => void, found: (line: string) => void): number {
  let built = 0;
  const peers = [
    {
      what: 'the Go peer',
      build: () => goBuild(repoPath('bench', 'peers', 'go'), repoPath('bench', 'peers', 'go', 'jwt-peer'), 'the Go peer'),
    },
    { what: 'the Rust peer', build: () => cargoBuild(repoPath('bench', 'peers', 'rust'), 'the Rust peer') },
    {
      what: 'the connect-go client',
      build: () => {
        const dir = repoPath('test', 'transport', 'connect-go');
        return goBuild(dir, repoPath('test', 'transport', 'connect-go', 'connect-go-client'), 'the connect-go client');
      },
    },
  ];
  for (const peer of peers) {
    const outcome = peer.build();
    if (outcome.ok) {
      found(`${peer.what}: built`);
      built++;
    } else {
      log(`${peer.what} not built: ${outcome.reason}`);
    }
  }
  return built;
}

await runProgram({ name: 'tools', url: import.meta.url, help: () => HELP, parse, run: install });
