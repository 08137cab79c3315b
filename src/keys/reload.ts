import type { Logger } from '../base/log.js';
import type { KeySet } from './key-set.js';
import { checkKeyReplacement } from './replace.js';

/** A key set as log lines name it: kids with algorithm and role, never material. @internal */
export function describeKeys(keys: KeySet): string[] {
  return keys.keys.map(
    ({ kid, alg, active, deactivatedAt }) =>
      `${kid} (${alg}, ${active ? 'signs' : deactivatedAt === undefined ? 'verify-only' : 'deactivated'})`,
  );
}

/**
 * Where a reloader counts what it did. The metrics layer implements it (ReloadMetrics in
 * src/metrics/jwt-service-metrics.ts); keys sit below metrics and so name only this shape.
 */
export interface ReloadCounts {
  /** Reloads that took effect. */
  reloads: number;
  /** Reloads that failed and left the keys in use as they were. */
  failures: number;
}

export interface KeyReloaderOptions {
  /** The keys in use. */
  readonly current: () => KeySet;
  /** Puts the new keys in use: in this process, or in every worker of a cluster. */
  readonly apply: (keys: KeySet) => void | Promise<void>;
  readonly logger: Logger;
  /** Counted when metrics are on. */
  readonly metrics?: ReloadCounts | undefined;
}

/**
 * Reloads keys on demand (SIGHUP, a watched file): loads them, checks they can take over
 * (every algorithm signed now is still signed), and applies them. A key set that does
 * not load or cannot take over changes nothing: one error line names the problem, the
 * failure is counted, the keys in use stay. One reload at a time, in the order asked.
 * @internal
 */
export class KeyReloader {
  readonly #options: KeyReloaderOptions;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: KeyReloaderOptions) {
    this.#options = options;
  }

  /**
   * Loads with `load` (reads and checks the key file) and applies; resolves with the keys
   * in use afterwards, rejects (already logged and counted) when the reload failed.
   */
  reload(load: () => Promise<KeySet>): Promise<KeySet> {
    const run = this.#queue.then(() => this.#reloadOnce(load));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #reloadOnce(load: () => Promise<KeySet>): Promise<KeySet> {
    const { current, apply, logger, metrics } = this.#options;
    try {
      const keys = await load();
      checkKeyReplacement(current(), keys);
      await apply(keys);
      if (metrics !== undefined) metrics.reloads += 1;
      logger.info('keys reloaded', { keys: describeKeys(keys) });
      return keys;
    } catch (err) {
      if (metrics !== undefined) metrics.failures += 1;
      logger.error(`key reload failed, keeping the keys in use: ${err instanceof Error ? err.message : String(err)}`);
      throw err;
    }
  }
}
