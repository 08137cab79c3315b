/**
 * The programs nobody on this project wrote, at pinned versions, installed one way into
 * `.tools/` (git-ignored): Go programs with `go install`, grpcio in a Python venv with pip,
 * Bun from the npm registry.
 *
 * `npm run tools` installs them all (.ci/run does, before the tests). The tests only look
 * them up ({@link requireGoTool}, {@link requireGrpcio}), so that no download ever runs
 * inside a test's timeout, and a missing one fails naming it and the command that
 * installs it. The benchmark installs ghz by itself when it is missing ({@link ensureGoTool}).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoPath } from './paths.js';
import { findOnPath, isExecutable, runCommand } from './exec.js';

const TOOLS_DIR = repoPath('.tools');
const TOOLS_BIN = join(TOOLS_DIR, 'bin');

/** The command that installs every tool. */
export const INSTALL_ALL = 'npm run tools';

/** A Go program installed with `GOBIN=<dir> go install <package>@<version>`. */
export interface GoTool {
  readonly name: string;
  /** The package path of its main package. */
  readonly package: string;
  /** The version of its module, as `go version -m` prints it. */
  readonly version: string;
  /** GOBIN: where `go install` writes it. */
  readonly dir: string;
  /** The file `go install` writes: the last element of the package path. */
  readonly binary: string;
  /** Taken from PATH first (any version), for machines without Go. */
  readonly fromPath: boolean;
  /** Who needs it, for the messages. */
  readonly usedBy: string;
  /**
   * A folder of bench/kit holding a go.mod that pins the tool's whole dependency graph, for
   * a tool whose own module has no go.mod (`+incompatible`): `go install pkg@version` would
   * then take the newest of its dependencies. Built there with `go build -mod=readonly`.
   */
  readonly pinnedModule?: string;
}

export const GO_TOOLS = {
  ghz: {
    name: 'ghz',
    package: 'github.com/bojand/ghz/cmd/ghz',
    version: 'v0.120.0',
    dir: TOOLS_BIN,
    binary: 'ghz',
    fromPath: true,
    usedBy: 'the macro benchmark, the soak and the reliability tests',
  },
  grpcurl: {
    name: 'grpcurl',
    package: 'github.com/fullstorydev/grpcurl/cmd/grpcurl',
    version: 'v1.9.4',
    dir: TOOLS_BIN,
    binary: 'grpcurl',
    fromPath: false,
    usedBy: 'the reflection and transport tests',
  },
  h2spec: {
    name: 'h2spec',
    package: 'github.com/summerwind/h2spec/cmd/h2spec',
    version: 'v2.2.1+incompatible',
    dir: TOOLS_BIN,
    binary: 'h2spec',
    fromPath: false,
    usedBy: 'the HTTP/2 conformance test',
    // v2.2.1 predates modules: its dependencies (x/net, cobra, ...) are pinned here instead.
    pinnedModule: repoPath('bench', 'kit', 'h2spec'),
  },
  // No tagged release resolves through the module proxy (its v3 tags lack a /v3 module path): pinned by commit.
  localKms: {
    name: 'local-kms',
    package: 'github.com/nsmithuk/local-kms',
    version: 'v0.0.0-20260228092603-2a5e92d09ab6',
    dir: TOOLS_BIN,
    binary: 'local-kms',
    fromPath: true,
    usedBy: 'the AWS KMS key backend tests and benchmark rows',
  },
  connectconformance: {
    name: 'connectconformance',
    package: 'connectrpc.com/conformance/cmd/connectconformance',
    version: 'v1.0.7',
    dir: TOOLS_BIN,
    binary: 'connectconformance',
    fromPath: false,
    usedBy: 'the Connect conformance suite (npm run test:conformance)',
  },
  // Its binary is called `client`: a folder of its own keeps that name out of .tools/bin.
  interopClient: {
    name: 'the grpc-go interop client',
    package: 'google.golang.org/grpc/interop/client',
    version: 'v1.77.0',
    dir: join(TOOLS_DIR, 'grpc-go-interop-v1.77.0'),
    binary: 'client',
    fromPath: false,
    usedBy: 'the transport interop tests',
  },
} as const satisfies Record<string, GoTool>;

/** grpcio and protobuf for Python, in a venv of their own. */
export const GRPCIO = {
  grpcio: '1.85.1',
  protobuf: '6.33.6',
  venv: join(TOOLS_DIR, 'python-grpcio-1.85.1-protobuf-6.33.6'),
} as const;

/**
 * Bun, the other JavaScript runtime with a node:net of its own: the bench's
 * `jwt-grpc-bun` row and the interop tests run the same server on it. Its release binary
 * is an npm package for each platform; only linux-x64 is pinned here.
 */
export const BUN = {
  name: 'Bun',
  package: '@oven/bun-linux-x64',
  version: '1.4.5',
  dir: join(TOOLS_DIR, 'bun-1.4.5'),
} as const;

const BUN_BINARY = join(BUN.dir, 'node_modules', ...BUN.package.split('/'), 'bin', 'bun');
/** The platform its npm package is: elsewhere Bun is not installed and what needs it is skipped. */
const BUN_PLATFORM = process.platform === 'linux' && process.arch === 'x64';
const BUN_INSTALL_ARGS = ['install', '--prefix', BUN.dir, '--no-save', '--no-audit', '--no-fund', `${BUN.package}@${BUN.version}`];
const BUN_INSTALL_COMMAND = `npm ${BUN_INSTALL_ARGS.join(' ')}`;

/** Bun's path, or `{ skip }` saying why there is none: a platform its pin does not cover, or not installed. */
export function findBun(): { bun: string } | { skip: string } {
  if (!BUN_PLATFORM) return { skip: `Bun is pinned for linux-x64 only, this is ${process.platform}-${process.arch}` };
  if (isExecutable(BUN_BINARY)) return { bun: BUN_BINARY };
  return { skip: `Bun ${BUN.version} is not installed at ${BUN_BINARY}: run \`${INSTALL_ALL}\`, or ${BUN_INSTALL_COMMAND}` };
}

/** Installs Bun unless it is there; null, saying why, where its pin does not apply. Throws when npm fails. */
export function ensureBun(log: (line: string) => void): string | null {
  const found = findBun();
  if ('bun' in found) return found.bun;
  if (!BUN_PLATFORM) {
    log(`${found.skip}: not installed (the Bun rows and tests will be skipped)`);
    return null;
  }
  log(`installing ${BUN.name} ${BUN.version}: ${BUN_INSTALL_COMMAND} (once; needs the npm registry)`);
  const npm = runCommand('npm', BUN_INSTALL_ARGS, { timeoutMs: 600_000, inheritOutput: true });
  if (npm.status !== 0 || !isExecutable(BUN_BINARY))
    throw new Error(`${BUN_INSTALL_COMMAND} failed (status ${npm.status ?? npm.error}; is the npm registry reachable?)`);
  return BUN_BINARY;
}

/**
 * The @grpc/grpc-js releases the grpc-js transport's tests run against besides
 * node_modules' (`npm run test:grpc-js-range`, ./grpc-js-range.ts): the peer range's oldest,
 * and the newest patch of each minor that changed what the transport's guards wrap (the
 * Server's private `createHttp2Server`, `commonServerOptions` and the 'stream' listener it
 * adds there). 1.11 copies `commonServerOptions` into each TLS server's options and passes
 * interceptors on; 1.13 splits the TLS options into constructor and secure-context ones.
 * Read in grpc-js's build/src/server.js of each release, 1.10.0 to 1.14.7.
 */
export const GRPC_JS_RELEASES = ['1.10.0', '1.11.4', '1.13.7'] as const;

/** Where `version` of @grpc/grpc-js is installed: an npm prefix of its own. */
export function grpcJsPrefix(version: string): string {
  return join(TOOLS_DIR, `grpc-js-${version}`);
}

/** The version of @grpc/grpc-js installed under `prefix`, or null when none is. */
function installedGrpcJs(prefix: string): string | null {
  try {
    const manifest = readFileSync(join(prefix, 'node_modules', '@grpc', 'grpc-js', 'package.json'), 'utf8');
    return (JSON.parse(manifest) as { version: string }).version;
  } catch {
    return null;
  }
}

/** Installs @grpc/grpc-js `version` into its prefix unless it is there; returns the prefix. Throws when npm fails. */
export function ensureGrpcJs(version: string, log: (line: string) => void): string {
  const prefix = grpcJsPrefix(version);
  if (installedGrpcJs(prefix) === version) return prefix;
  const args = ['install', '--prefix', prefix, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `@grpc/grpc-js@${version}`];
  log(`installing @grpc/grpc-js ${version}: npm ${args.join(' ')} (once; needs the npm registry)`);
  const npm = runCommand('npm', args, { timeoutMs: 300_000, inheritOutput: true });
  if (npm.status !== 0 || installedGrpcJs(prefix) !== version)
    throw new Error(`npm ${args.join(' ')} failed (status ${npm.status ?? npm.error}; is the npm registry reachable?)`);
  return prefix;
}

/** The shell command that installs `tool` alone. */
export function goInstallCommand(tool: GoTool): string {
  if (tool.pinnedModule !== undefined)
    return `go build -C "${tool.pinnedModule}" -mod=readonly -o "${join(tool.dir, tool.binary)}" ${tool.package}`;
  return `GOBIN="${tool.dir}" go install ${tool.package}@${tool.version}`;
}

/** The `go` arguments of {@link goInstallCommand}. */
function goInstallArgs(tool: GoTool): string[] {
  if (tool.pinnedModule !== undefined)
    return ['build', '-C', tool.pinnedModule, '-mod=readonly', '-o', join(tool.dir, tool.binary), tool.package];
  return ['install', `${tool.package}@${tool.version}`];
}

/**
 * The path of `tool` when it is installed: on PATH when the tool may come from there,
 * else in `.tools/` at the pinned version (checked with `go version -m` where Go is
 * installed; without Go, what is there is used as it is). Null when it is not.
 */
export function findGoTool(tool: GoTool): string | null {
  if (tool.fromPath) {
    const onPath = findOnPath(tool.binary);
    if (onPath !== null) return onPath;
  }
  const path = join(tool.dir, tool.binary);
  if (!isExecutable(path)) return null;
  const go = findOnPath('go');
  if (go === null) return path;
  const info = runCommand(go, ['version', '-m', path]).stdout;
  const version = /^\s*mod\s+\S+\s+(\S+)/m.exec(info)?.[1];
  return version === tool.version ? path : null;
}

/** `tool`'s path; throws naming it and the commands that install it when it is not installed. */
export function requireGoTool(tool: GoTool): string {
  const path = findGoTool(tool);
  if (path !== null) return path;
  throw new Error(
    `${tool.name} ${tool.version} is not installed (${tool.usedBy} need it at ${join(tool.dir, tool.binary)}).\n` +
      `Install every tool with \`${INSTALL_ALL}\`, or this one with: ${goInstallCommand(tool)}` +
      (tool.fromPath ? `\nWithout Go, put a ${tool.name} ${tool.version} release binary on PATH.` : ''),
  );
}

/** `tool`'s path, installing it with `go install` first when it is not installed. Throws when that fails. */
export function ensureGoTool(tool: GoTool, log: (line: string) => void): string {
  const found = findGoTool(tool);
  if (found !== null) return found;
  const go = findOnPath('go');
  if (go === null) {
    throw new Error(
      `${tool.name} ${tool.version} is not installed and Go (the go command) is not on PATH to install it.\n${requireHint(tool)}`,
    );
  }
  log(`installing ${tool.name}: ${goInstallCommand(tool)} (once; needs the Go module proxy)`);
  const result = runCommand(go, goInstallArgs(tool), {
    env: { ...process.env, GOBIN: tool.dir },
    inheritOutput: true,
    timeoutMs: 600_000,
  });
  const installed = findGoTool(tool);
  if (result.status !== 0 || installed === null) {
    throw new Error(`${goInstallCommand(tool)} failed (status ${result.status ?? result.error}).\n${requireHint(tool)}`);
  }
  return installed;
}

function requireHint(tool: GoTool): string {
  return (
    `Install Go (https://go.dev/dl/) and run \`${INSTALL_ALL}\`` +
    (tool.fromPath ? `, or put a ${tool.name} ${tool.version} release binary on PATH.` : '.')
  );
}

/** The venv's interpreter. */
const VENV_PYTHON = join(GRPCIO.venv, 'bin', 'python');

function grpcioImports(): boolean {
  return existsSync(VENV_PYTHON) && runCommand(VENV_PYTHON, ['-c', 'import grpc, google.protobuf']).status === 0;
}

/**
 * The Python with grpcio, for the grpcio interop test; `{ skip }` without python3 on
 * PATH (the test is then skipped, saying why). Throws, naming the command, when python3
 * is there but the venv is not installed.
 */
export function requireGrpcio(): { python: string } | { skip: string } {
  if (findOnPath('python3') === null) return { skip: 'python3 is not on PATH' };
  if (grpcioImports()) return { python: VENV_PYTHON };
  throw new Error(
    `grpcio ${GRPCIO.grpcio} (with protobuf ${GRPCIO.protobuf}) is not installed in ${GRPCIO.venv}.\n` +
      `Install every tool with \`${INSTALL_ALL}\`, or this one with: python3 -m venv ${GRPCIO.venv} && ` +
      `${VENV_PYTHON} -m pip install grpcio==${GRPCIO.grpcio} protobuf==${GRPCIO.protobuf}`,
  );
}

/**
 * Creates the grpcio venv unless it works already. Without python3 it does nothing and
 * says why (the grpcio test is skipped there); a failed venv or pip throws.
 */
export function ensureGrpcio(log: (line: string) => void): string | null {
  if (grpcioImports()) return VENV_PYTHON;
  const python3 = findOnPath('python3');
  if (python3 === null) {
    log('python3 is not on PATH: grpcio not installed (the grpcio interop test will be skipped)');
    return null;
  }
  log(`installing grpcio ${GRPCIO.grpcio} and protobuf ${GRPCIO.protobuf} into ${GRPCIO.venv} (once; needs PyPI)`);
  const venv = runCommand(python3, ['-m', 'venv', GRPCIO.venv], { timeoutMs: 120_000 });
  if (venv.status !== 0)
    throw new Error(`python3 -m venv ${GRPCIO.venv} failed (is the venv module installed?): ${venv.stderr}${venv.error ?? ''}`);
  const pip = runCommand(
    VENV_PYTHON,
    ['-m', 'pip', 'install', '--disable-pip-version-check', '-q', `grpcio==${GRPCIO.grpcio}`, `protobuf==${GRPCIO.protobuf}`],
    { timeoutMs: 600_000, inheritOutput: true },
  );
  if (pip.status !== 0 || !grpcioImports()) {
    throw new Error(
      `pip could not install grpcio==${GRPCIO.grpcio} protobuf==${GRPCIO.protobuf} (is PyPI reachable?): status ${pip.status ?? pip.error}`,
    );
  }
  return VENV_PYTHON;
}
