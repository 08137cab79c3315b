/**
 * Reloading the issuance policy file (SIGHUP, `--watch-keys`), the way keys reload
 * (src/keys/reload.ts): read and check the file, then apply it in this process or in
 * every worker. A file that does not read, parse or pass the schema changes nothing: one
 * error line names the file, the JSON path and the problem, and the policy in use stays.
 */
import { createHash } from 'node:crypto';
import type { ReloadCounts } from '../keys/reload.js';
import type { Logger } from '../base/log.js';
import type { JwtPolicy } from './document.js';

/**
 * A short name of a policy's content for log lines: the first 16 hex digits of the
 * SHA-256 of its checked JSON. Two processes that log the same digest enforce the same
 * rules; the log never carries the policy itself. @internal
 */
export function policyDigest(policy: JwtPolicy): string {
  return `sha256:${createHash('sha256').update(JSON.stringify(policy)).digest('hex').slice(0, 16)}`;
}

/** What a policy reload log line says of the policy: its digest and size, never its body. @internal */
export function describePolicy(policy: JwtPolicy, generation: number): Record<string, unknown> {
  return { policyGeneration: generation, policyDigest: policyDigest(policy), callers: Object.keys(policy.callers).length };
}

export interface PolicyReloaderOptions {
  /** Puts the new policy in use: in this process, or in every worker of a cluster; `generation` counts reloads from 1. */
  readonly apply: (policy: JwtPolicy, generation: number) => void | Promise<void>;
  readonly logger: Logger;
  /** Counted when metrics are on (`jwt_grpc_policy_reloads_total`, `jwt_grpc_policy_reload_failures_total`). */
  readonly metrics?: ReloadCounts | undefined;
}

/**
 * Reloads the policy on demand, one reload at a time in the order asked. Resolves with
 * the policy now in use; rejects (already logged) when the reload failed. @internal
 */
export class PolicyReloader {
  readonly #options: PolicyReloaderOptions;
  #queue: Promise<unknown> = Promise.resolve();
  #generation = 0;

  constructor(options: PolicyReloaderOptions) {
    this.#options = options;
  }

  /** Loads with `load` (reads and checks the policy file) and applies. */
  reload(load: () => Promise<JwtPolicy>): Promise<JwtPolicy> {
    const run = this.#queue.then(() => this.#reloadOnce(load));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #reloadOnce(load: () => Promise<JwtPolicy>): Promise<JwtPolicy> {
    const { apply, logger, metrics } = this.#options;
    try {
      const policy = await load();
      const generation = this.#generation + 1;
      await apply(policy, generation);
      this.#generation = generation;
      if (metrics !== undefined) metrics.reloads += 1;
      logger.info('policy reloaded', describePolicy(policy, generation));
      return policy;
    } catch (err) {
      if (metrics !== undefined) metrics.failures += 1;
      logger.error(`policy reload failed, keeping the policy in use: ${err instanceof Error ? err.message : String(err)}`);
      throw err;
    }
  }
}
