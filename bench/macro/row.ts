/**
 * What a row of ours is made of (the rows of servers.ts and opt-in-rows.ts): a file of its
 * own below both, so that the two import it and not each other.
 */
import type { RpcMethod } from '../ghz/ghz-args.js';
import type { Transport } from '../../src/lib/index.js';
import type { BackgroundLoad } from './background-load.js';
import type { RowAssets, RowNeed } from './row-assets.js';
import type { CoreGroup } from './scenarios.js';

/** How a row of ours runs: the parameters of servers.ts' `oursServer`. */
export interface OursRow {
  readonly name: string;
  readonly role: 'ours' | 'variant';
  readonly groups: readonly CoreGroup[];
  readonly methods: readonly RpcMethod[];
  readonly cluster: boolean;
  /** `--transport`, always passed, so that a row's stack does not depend on the CLI's default. */
  readonly transport: Transport;
  readonly v8Flags: readonly string[];
  /** More `serve` options (e.g. `--metrics-port 0`). */
  readonly serveArgs?: readonly string[];
  /** The runtime that runs the CLI: Node (the default), or Bun, for the question whether the gap to Go is the runtime's. */
  readonly runtime?: 'node' | 'bun';
  /**
   * Off everywhere but `jwt-grpc-cached`: the peers verify every call, and the fixed
   * token of a VerifyJwt scenario would otherwise be a cache hit every time. GenerateJwt
   * never uses that cache (a fresh token is verified uncached), so it is not affected.
   */
  readonly verifyCache: boolean;
  readonly description: string;
  /** `serve` options made from what the run prepared (certificate files, the policy). */
  readonly assetArgs?: (assets: RowAssets) => string[];
  /** Environment variables made from what the run prepared (the OTLP sink's URL). */
  readonly assetEnv?: (assets: RowAssets) => Record<string, string>;
  readonly needs?: readonly RowNeed[];
  readonly optIn?: boolean;
  readonly backgroundLoad?: BackgroundLoad;
  /** The CLI to run: this tree's build, or another commit's (`--baseline-ref`). */
  readonly cli?: string;
  /**
   * Whether tokens carry a `jti` (serve's default). Off (`--no-jti`) on every row but the
   * revocation rows: the Go peer signs none (bench/README.md, "Servers under test").
   */
  readonly jti?: boolean;
  /**
   * Whether GenerateJwt verifies the token it signed before answering (`--verify-issued`),
   * as every peer does (bench/README.md, "Servers under test"). On (the default) in every
   * row: each is compared with a peer or with `jwt-grpc`, which is; off only for a commit's
   * build from before the flag, which verifies always, the same work.
   */
  readonly verifyIssued?: boolean;
}
