/**
 * `npm run tools`: installs every pinned tool of tools.ts that is missing (ghz, grpcurl,
 * the grpc-go interop client, the grpcio venv, Bun) and prints where each one is. Run before
 * the tests (.ci/run does), so that none is downloaded inside a test's timeout.
 */
import { type ParsedCommandLine, parseFlags, runProgram } from '../common/program.js';
import { BUN, GO_TOOLS, GRPCIO, ensureBun, ensureGoTool, ensureGrpcio } from './tools.js';

const HELP = `Usage: npm run tools      (or: node dist/bench/harness/install-tools.js)

Installs into .tools/, unless they are there already, at pinned versions, what the tests
and the benchmark need:
${Object.values(GO_TOOLS)
  .map((tool) => `  ${tool.name} ${tool.version}, with go install (needs Go and the Go module proxy)\n`)
  .join('')}  grpcio ${GRPCIO.grpcio} and protobuf ${GRPCIO.protobuf} in a Python venv, with pip (needs python3 and
  PyPI; without python3 it is skipped, and so is the grpcio test)
  ${BUN.name} ${BUN.version}, with npm (needs the npm registry; linux-x64 only, skipped elsewhere)

Exit status: 0 everything installed, 1 an installation failed, 2 bad option.
`;

function parse(argv: readonly string[]): ParsedCommandLine<Record<string, never>> {
  return parseFlags(argv, {}) === 'help' ? { kind: 'help' } : { kind: 'run', options: {} };
}

async function install(): Promise<number> {
  const log = (line: string): void => void process.stderr.write(`tools: ${line}\n`);
  for (const tool of Object.values(GO_TOOLS)) log(`${tool.name} ${tool.version}: ${ensureGoTool(tool, log)}`);
  const python = ensureGrpcio(log);
  if (python !== null) log(`grpcio: ${python}`);
  const bun = ensureBun(log);
  if (bun !== null) log(`${BUN.name} ${BUN.version}: ${bun}`);
  return 0;
}

await runProgram({ name: 'tools', url: import.meta.url, help: () => HELP, parse, run: install });
