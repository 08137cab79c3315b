/**
 * The remote verifier's metric, in a prom-client Registry its user passes
 * (`createRemoteVerifier(source, { metricsRegistry })`):
 *
 * - `jwt_grpc_remote_jwks_rejected_keys_total{reason}`: keys of fetched JWK Sets left out,
 *   by {@link KeyRefusalReason} (`weak`, `mismatch`, `encoding`, `malformed`, `unsupported`),
 *   counted each time a changed set is loaded (an unchanged set, or a 304, counts nothing)
 */
import type { Registry } from 'prom-client';
import { KEY_REFUSAL_REASONS, type KeyRefusalReason } from '../keys/key-checks.js';
import { registerComputed } from './computed.js';

/** Counts of rejected keys, by reason. */
export type RejectedKeyCounts = ReadonlyMap<KeyRefusalReason, { count: number }>;

/**
 * One set of counts per registry: verifiers sharing a registry count into one metric (a
 * registry refuses a name registered twice). Weak, so a dropped registry goes with its counts.
 */
const COUNTS = new WeakMap<Registry, Map<KeyRefusalReason, { count: number }>>();

/** The counts of `registry`'s `jwt_grpc_remote_jwks_rejected_keys_total`, registering it on first use. @internal */
export function rejectedKeyCounts(registry: Registry): RejectedKeyCounts {
  let counts = COUNTS.get(registry);
  if (counts === undefined) {
    const cells = new Map(KEY_REFUSAL_REASONS.map((reason) => [reason, { count: 0 }]));
    registerComputed(registry, {
      name: 'jwt_grpc_remote_jwks_rejected_keys_total',
      help: 'Keys of fetched JWK Sets a remote verifier left out, by reason: weak, mismatch, encoding, malformed, unsupported.',
      type: 'counter',
      samples: () => [...cells].map(([reason, { count }]) => ({ labels: { reason }, value: count })),
    });
    counts = cells;
    COUNTS.set(registry, counts);
  }
  return counts;
}
