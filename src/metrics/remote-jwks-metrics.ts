/**
 * The remote verifier's metrics, in a prom-client Registry its user passes
 * (`createRemoteVerifier(source, { metricsRegistry })`):
 *
 * - `jwt_grpc_remote_jwks_rejected_keys_total{reason}`: keys of fetched JWK Sets left out,
 *   by {@link KeyRefusalReason} (`weak`, `mismatch`, `encoding`, `malformed`, `unsupported`),
 *   counted each time a changed set is loaded (an unchanged set, or a 304, counts nothing)
 * - `jwt_grpc_remote_fetch_failures_total{document, answer}`: failed fetches of a JWK Set
 *   (`jwks`) or a Token Status List (`status_list`), by what answers meanwhile: the last good
 *   copy (`last_good`, within `maxStaleMs`) or nothing, calls that need it refused (`refused`)
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

/** The documents a remote verifier fetches, and what answers when a fetch of one fails. */
export const REMOTE_DOCUMENTS = ['jwks', 'status_list'] as const;
export const FAILED_FETCH_ANSWERS = ['last_good', 'refused'] as const;
export type RemoteDocument = (typeof REMOTE_DOCUMENTS)[number];
export type FailedFetchAnswer = (typeof FAILED_FETCH_ANSWERS)[number];

/** Counts failed fetches, by document and by what answers meanwhile. */
export type FetchFailureCount = (document: RemoteDocument, answer: FailedFetchAnswer) => void;

/** One counter per registry, shared by its verifiers, as {@link rejectedKeyCounts}. */
const FAILURES = new WeakMap<Registry, FetchFailureCount>();

/** The counter of `registry`'s `jwt_grpc_remote_fetch_failures_total`, registering it on first use. @internal */
export function fetchFailureCount(registry: Registry): FetchFailureCount {
  let count = FAILURES.get(registry);
  if (count === undefined) {
    const cells = REMOTE_DOCUMENTS.flatMap((document) => FAILED_FETCH_ANSWERS.map((answer) => ({ document, answer, count: 0 })));
    registerComputed(registry, {
      name: 'jwt_grpc_remote_fetch_failures_total',
      help: 'Failed fetches of a JWK Set (jwks) or status list (status_list) by a remote verifier, by what answered: the last good copy, or none (refused).',
      type: 'counter',
      samples: () => cells.map(({ document, answer, count: value }) => ({ labels: { document, answer }, value })),
    });
    count = (document, answer) => {
      const cell = cells.find((each) => each.document === document && each.answer === answer);
      if (cell !== undefined) cell.count += 1;
    };
    FAILURES.set(registry, count);
  }
  return count;
}
