/**
 * The floor of an ES256 GenerateJwt: what OpenSSL's own P-256 costs to sign once and verify
 * once, measured by `openssl speed ecdsap256` on the server's core in the same run as the
 * servers. openssl speed counts operations per second of its own CPU time (it reports the
 * user time it ran, not the wall time), so its figures are CPU per operation, the unit of the
 * benchmark's "server CPU per call", and a busy machine stretches them as it stretches the
 * servers'. It is read before and after the columns and before every round of an ES256 cell,
 * and each round's CPU per call is divided by the reading of its round: what made the VM
 * faster or slower for a round moves both (macro/floor-section.ts). Each reading is followed,
 * on the same core, by node:crypto's own sign and verify in a loop (node-crypto-floor.ts).
 */
import { existsSync } from 'node:fs';
import { findOnPath, runCommand } from '../kit/exec.js';
import { median } from '../common/stats.js';
import { type CorePlan, pinnedCommand } from './cores.js';
import { NODE_CRYPTO_CHILD, type NodeCryptoReading, parseNodeCryptoLine } from './node-crypto-floor.js';

/** One `openssl speed` reading: CPU microseconds per P-256 signature and per verification. */
export interface FloorReading {
  readonly signUs: number;
  readonly verifyUs: number;
  /** When it ran, ms since the run started. */
  readonly atMs: number;
  /** The scenario and round it was read before; absent for the readings before and after the columns. */
  readonly round?: { readonly scenario: string; readonly round: number };
  /** node:crypto's sign and verify read right after, on the same core; absent where that failed (`nodeSkipped` says why). */
  readonly node?: NodeCryptoReading;
}

/** The floor of a run: its readings and their median sign + verify. */
export interface OpensslFloor {
  /** The exact command, pinning included, that a quiet re-run repeats. */
  readonly command: string;
  /** `openssl version`'s line, e.g. `OpenSSL 3.0.19 27 Jan 2026`. */
  readonly version: string;
  readonly readings: readonly FloorReading[];
  /** Median sign + verify over all the readings, µs: one call's cryptographic work (the ratios use each round's own). */
  readonly callUs: number;
  /** Null when measured; else why not (openssl missing, its output unreadable), and the figures are NaN. */
  readonly skipped: string | null;
  /** `node node-crypto-child.js SECONDS`, pinned as openssl is. */
  readonly nodeCommand: string;
  /** Null when every reading has node:crypto's figures; else why one has not (the first reason). */
  readonly nodeSkipped: string | null;
}

/**
 * Seconds of each of sign and verify per reading: ~2x10^4 signatures and ~6x10^3
 * verifications here, and 2 s per round of an ES256 cell. The CPU time openssl divides by
 * is counted in 10 ms ticks: under 1 % of a second.
 */
export const FLOOR_SECONDS = 1;

/**
 * Operations per second of `openssl speed ecdsap256`'s output: the machine-readable line
 * (`-mr`: `+F4:<index>:256:<sign/s>:<verify/s>`) or the table's
 * (` 256 bits ecdsa (nistp256)   0.0000s   0.0001s  49928.1  16408.8`); null when neither is there.
 */
export function parseOpensslSpeed(output: string): { readonly signPerS: number; readonly verifyPerS: number } | null {
  const machine = /^\+F4:\d+:256:([\d.]+):([\d.]+)\s*$/m.exec(output);
  const table = /^\s*256 bits ecdsa \(nistp256\)\s+[\d.]+s\s+[\d.]+s\s+([\d.]+)\s+([\d.]+)\s*$/m.exec(output);
  const found = machine ?? table;
  if (found === null) return null;
  const signPerS = Number(found[1]);
  const verifyPerS = Number(found[2]);
  return signPerS > 0 && verifyPerS > 0 ? { signPerS, verifyPerS } : null;
}

/** The arguments of one reading. */
export function floorArgs(seconds: number): string[] {
  return ['speed', '-mr', '-seconds', String(seconds), 'ecdsap256'];
}

/** Measures the floor on `cpus` once; `skipped` names why not (no openssl, unreadable output). */
export class OpensslFloorProbe {
  readonly #plan: CorePlan;
  readonly #cpus: readonly number[];
  readonly #seconds: number;
  readonly #startedAt: number;
  readonly #openssl: string | null;
  readonly #readings: FloorReading[] = [];
  #skipped: string | null;
  #nodeSkipped: string | null = null;
  readonly #nodeChild: string;

  /** `nodeChild`: the compiled node-crypto-child.js (tests pass a stand-in). */
  constructor(
    plan: CorePlan,
    cpus: readonly number[],
    startedAt: number,
    seconds = FLOOR_SECONDS,
    openssl = findOnPath('openssl'),
    nodeChild = NODE_CRYPTO_CHILD,
  ) {
    this.#plan = plan;
    this.#nodeChild = nodeChild;
    this.#cpus = cpus.slice(0, 1);
    this.#seconds = seconds;
    this.#startedAt = startedAt;
    this.#openssl = openssl;
    this.#skipped = openssl === null ? 'openssl not found on PATH: no OpenSSL floor for ES256' : null;
  }

  /** One reading, before `round` of an ES256 cell or (without) before and after the columns; after a failure, none more (the first reason is the one reported). */
  measure(round?: FloorReading['round']): void {
    if (this.#skipped !== null || this.#openssl === null) return;
    const { command, args } = pinnedCommand(this.#plan, this.#cpus, this.#openssl, floorArgs(this.#seconds));
    const result = runCommand(command, args, { timeoutMs: (4 * this.#seconds + 30) * 1000 });
    const parsed = result.status === 0 ? parseOpensslSpeed(result.stdout) : null;
    if (parsed === null) {
      this.#skipped = `openssl speed ecdsap256 gave no P-256 figures (${result.error ?? `exit status ${result.status}`}): no OpenSSL floor for ES256`;
      return;
    }
    const node = this.#measureNode();
    this.#readings.push({
      signUs: 1e6 / parsed.signPerS,
      verifyUs: 1e6 / parsed.verifyPerS,
      atMs: performance.now() - this.#startedAt,
      ...(round === undefined ? {} : { round }),
      ...(node === null ? {} : { node }),
    });
  }

  /** node:crypto's reading on the same core, or null (the first failure's reason kept in nodeSkipped). */
  #measureNode(): NodeCryptoReading | null {
    if (!existsSync(this.#nodeChild)) {
      this.#nodeSkipped ??= `${this.#nodeChild} does not exist: run \`npm run build\` first`;
      return null;
    }
    const { command, args } = pinnedCommand(this.#plan, this.#cpus, process.execPath, [this.#nodeChild, String(this.#seconds)]);
    const result = runCommand(command, args, { timeoutMs: (4 * this.#seconds + 30) * 1000 });
    const parsed = result.status === 0 ? parseNodeCryptoLine(result.stdout) : null;
    if (parsed === null) {
      const why =
        result.error ??
        (result.status === 0 ? 'no figures in its output' : `exit status ${result.status}: ${result.stderr.trim().slice(0, 200)}`);
      this.#nodeSkipped ??= `node:crypto's loop gave no figures (${why})`;
    }
    return parsed;
  }

  result(): OpensslFloor {
    const { command, args } = pinnedCommand(this.#plan, this.#cpus, 'openssl', floorArgs(this.#seconds));
    const version = this.#openssl === null ? '' : runCommand(this.#openssl, ['version']).stdout.trim();
    const calls = this.#readings.map((r) => r.signUs + r.verifyUs);
    const node = pinnedCommand(this.#plan, this.#cpus, 'node', ['dist/bench/harness/node-crypto-child.js', String(this.#seconds)]);
    return {
      command: [command, ...args].join(' '),
      version,
      readings: [...this.#readings],
      callUs: calls.length === 0 ? Number.NaN : median(calls),
      skipped: this.#skipped ?? (calls.length === 0 ? 'openssl speed was not run' : null),
      nodeCommand: [node.command, ...node.args].join(' '),
      nodeSkipped: this.#nodeSkipped,
    };
  }
}
