import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { captureOutput } from '../kit/exec.js';
import { repoPath } from '../kit/paths.js';

/** The machine and software a run's figures belong to. */
export interface MachineInfo {
  readonly cpuModel: string;
  readonly logicalCpus: number;
  /** CPUs this process may use (affinity / container limits). */
  readonly availableCpus: number;
  readonly memoryGiB: number;
  readonly os: string;
  readonly kernel: string;
  readonly arch: string;
  /** Whether the CPU reports a hypervisor (the `hypervisor` flag of /proc/cpuinfo): steal and noisy neighbours apply. */
  readonly virtualized: boolean;
}

export interface Versions {
  readonly node: string;
  readonly go: string | null;
  readonly ghz: string | null;
  readonly packages: Readonly<Record<string, string | null>>;
}

/** /proc/cpuinfo, or '' where there is none (not Linux). */
function cpuInfo(): string {
  try {
    return readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    return '';
  }
}

function cpuModel(): string {
  const match = cpuInfo().match(/^model name\s*:\s*(.+)$/m);
  // Not Linux: fall back to what Node knows.
  return match?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown';
}

function osName(): string {
  try {
    const match = readFileSync('/etc/os-release', 'utf8').match(/^PRETTY_NAME="?([^"\n]+)"?$/m);
    if (match?.[1] !== undefined) return match[1];
  } catch {
    // no os-release
  }
  return `${os.type()} ${os.release()}`;
}

export function machineInfo(): MachineInfo {
  return {
    cpuModel: cpuModel(),
    logicalCpus: os.cpus().length,
    availableCpus: os.availableParallelism(),
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    os: osName(),
    kernel: `${os.type()} ${os.release()}`,
    arch: os.arch(),
    virtualized: /^flags\s*:.*\bhypervisor\b/m.test(cpuInfo()),
  };
}

/** The version field of node_modules/<name>/package.json, or null. */
function packageVersion(name: string): string | null {
  const manifest = repoPath('node_modules', name, 'package.json');
  if (!existsSync(manifest)) return null;
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version ?? null;
}

/**
 * ghz's version. A `go install`ed ghz answers `--version` with "dev", so the module
 * version recorded in the binary (`go version -m`) is preferred when Go is available.
 */
function ghzVersion(ghzPath: string | null): string | null {
  if (ghzPath === null) return null;
  const buildInfo = captureOutput('go', ['version', '-m', ghzPath]);
  const module = buildInfo?.match(/^\s*mod\s+github\.com\/bojand\/ghz\s+(\S+)/m)?.[1];
  if (module !== undefined && module !== '(devel)') return module;
  return captureOutput(ghzPath, ['--version']);
}

export function versions(ghzPath: string | null): Versions {
  return {
    node: process.version,
    go: captureOutput('go', ['version']),
    ghz: ghzVersion(ghzPath),
    packages: Object.fromEntries(
      ['@grpc/grpc-js', '@grpc/proto-loader', 'jose', 'fast-jwt', 'jsonwebtoken', 'tinybench'].map((name) => [name, packageVersion(name)]),
    ),
  };
}
