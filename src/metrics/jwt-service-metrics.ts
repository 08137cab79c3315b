/**
 * JwtService's own metrics:
 *
 * - `jwt_grpc_tokens_issued_total{alg, kid}`: tokens GenerateJwt signed
 * - `jwt_grpc_verifications_total{result, reason}`: VerifyJwt outcomes; `result` is
 *   `valid` (reason `none`) or `invalid` with the proto's reason (`EXPIRED`, `BAD_SIGNATURE`...)
 * - `jwt_grpc_verify_cache_hits_total`, `jwt_grpc_verify_cache_misses_total`: lookups of
 *   the VerifyJwt cache of verified tokens
 * - `jwt_grpc_policy_decisions_total{decision, rule}`: GenerateJwt calls under the issuance
 *   policy (with a policy only), each counted once: `allow` (rule `none`), `deny` with the
 *   rule it broke or `request.<field>` for a bad request field, or `error` (`unavailable`, `internal`)
 * - `jwt_grpc_token_exchanges_total{decision, rule}`: token exchanges (ExchangeToken and
 *   the token endpoint), each counted once: `allow` (rule `none`), `deny` with the rule that
 *   refused it (`subject_token`, `policy`, `scopes`, `request.<field>`...), or `error`
 * - `jwt_grpc_revocations_total{outcome}`: RevokeJwt calls by {@link RevocationOutcome}
 * - `jwt_grpc_revocation_store_up{store}`: 1 while the revocation store is reachable, 0 when not
 * - `jwt_grpc_keys{alg, kid, role}`: 1 per loaded key; role `active` (signs),
 *   `verify-only`, or `deactivated` (verify-only since its `deactivated_at`)
 * - `jwt_grpc_key_reloads_total`, `jwt_grpc_key_reload_failures_total`: key file reloads
 *   that took effect, and those that failed and left the keys in use as they were
 * - `jwt_grpc_key_backend_bad_signatures_total{kid, backend}`: signatures an HSM or a KMS
 *   returned that did not verify with the key's public key (never handed to a caller)
 */
import type { Registry } from 'prom-client';
import { keyBackendBadSignatures } from '../keys/backend.js';
import type { KeySet } from '../keys/key-set.js';
import type { ReloadCounts } from '../keys/reload.js';
import type { VerifyFailureReason, VerifyResult } from '../tokens/result.js';
import { registerComputed } from './computed.js';

const REASONS: readonly VerifyFailureReason[] = [
  'MALFORMED',
  'BAD_SIGNATURE',
  'ALGORITHM_NOT_ALLOWED',
  'UNKNOWN_KEY',
  'EXPIRED',
  'NOT_YET_VALID',
  'AUDIENCE_MISMATCH',
  'ISSUER_MISMATCH',
  'UNSUPPORTED_HEADER',
  'REVOKED',
];

/** What the service reports to its metrics; the service holds none when metrics are off. */
export interface ServiceObserver {
  /** GenerateJwt signed a token with key `kid` of `alg`. */
  tokenIssued(alg: string, kid: string): void;
  /** VerifyJwt verified a token (not the self-check of GenerateJwt). */
  verified(result: VerifyResult): void;
  /** A GenerateJwt under a policy ended: allowed (rule `none`), denied by `rule`, or failed in the server. */
  policyDecision(decision: PolicyDecision, rule: string): void;
  /** A RevokeJwt ended with `outcome`. */
  revocation(outcome: RevocationOutcome): void;
  /** A token exchange ended: allowed (rule `none`), denied by `rule`, or failed in the server. */
  exchangeDecision(decision: PolicyDecision, rule: string): void;
}

/**
 * How a GenerateJwt under a policy ended: `allow`, `deny` (a policy rule, or a bad request
 * field: rule `request.<field>`), `error` (the server failed: rule `unavailable` or `internal`).
 */
export type PolicyDecision = 'allow' | 'deny' | 'error';

/**
 * How a RevokeJwt ended: `revoked` (new), `already` (held already), `invalid` (a bad
 * request, a token that does not verify), `denied` (no admin credential, not a revoker),
 * `unauthenticated` (admin secret missing or wrong), `unavailable` (the store refused it).
 */
export type RevocationOutcome = 'revoked' | 'already' | 'invalid' | 'denied' | 'unauthenticated' | 'unavailable';

const REVOCATION_OUTCOMES: readonly RevocationOutcome[] = ['revoked', 'already', 'invalid', 'denied', 'unauthenticated', 'unavailable'];

/** A revocation store as the gauge reads it. */
export interface StoreStatus {
  readonly storeKind: string | undefined;
  readonly storeUp: boolean | undefined;
}

/**
 * Registers `jwt_grpc_revocation_store_up{store}`: 1 while the store `current` returns is
 * reachable and current, 0 when not, no sample without a store. Where the store lives: a
 * single server, or a cluster's primary (`min` across processes).
 */
export function registerStoreGauge(registry: Registry, current: () => StoreStatus | undefined): void {
  registerComputed(registry, {
    name: 'jwt_grpc_revocation_store_up',
    help: 'Whether the revocation store (file, redis) is reachable and the in-memory copy current: 1 up, 0 down.',
    type: 'gauge',
    aggregator: 'min',
    samples: () => {
      const status = current();
      if (status?.storeKind === undefined || status.storeUp === undefined) return [];
      return [{ labels: { store: status.storeKind }, value: status.storeUp ? 1 : 0 }];
    },
  });
}

/** Where the metrics read the service's current state at scrape time. */
export interface ServiceState {
  readonly keys: KeySet;
  /** Lookups of the VerifyJwt cache since the server started. */
  readonly cacheStats: { readonly hits: number; readonly misses: number };
  /** The revocations, whose store the gauge reads; the worker of a cluster reports none (its primary does). */
  readonly revocations?: StoreStatus;
}

/** The role label of a key in `jwt_grpc_keys`. */
export function keyRole(key: KeySet['keys'][number]): 'active' | 'verify-only' | 'deactivated' {
  if (key.active) return 'active';
  return key.deactivatedAt === undefined ? 'verify-only' : 'deactivated';
}

/** Registers `jwt_grpc_keys` for the keys `current` returns at each scrape; `max` across a cluster's workers, which hold the same keys. */
export function registerKeyGauge(registry: Registry, current: () => KeySet | undefined): void {
  registerComputed(registry, {
    name: 'jwt_grpc_keys',
    help: 'Loaded keys: 1 per key, by algorithm, kid and role (active, verify-only, deactivated).',
    type: 'gauge',
    aggregator: 'max',
    samples: () => (current()?.keys ?? []).map((key) => ({ labels: { alg: key.alg, kid: key.kid, role: keyRole(key) }, value: 1 })),
  });
}

/**
 * The reload counters of the key file or of the policy file, kept where the file is read:
 * the single process, or a cluster's primary.
 */
export class ReloadMetrics implements ReloadCounts {
  reloads = 0;
  failures = 0;

  constructor(registry: Registry, file: 'key' | 'policy' = 'key') {
    const inUse = file === 'key' ? 'the keys' : 'the policy';
    registerComputed(registry, {
      name: `jwt_grpc_${file}_reloads_total`,
      help: `${file === 'key' ? 'Key' : 'Policy'} file reloads that took effect (SIGHUP, --watch-keys).`,
      type: 'counter',
      samples: () => [{ labels: {}, value: this.reloads }],
    });
    registerComputed(registry, {
      name: `jwt_grpc_${file}_reload_failures_total`,
      help: `${file === 'key' ? 'Key' : 'Policy'} file reloads that failed and left ${inUse} in use unchanged.`,
      type: 'counter',
      samples: () => [{ labels: {}, value: this.failures }],
    });
  }
}

/** Counts of the service's work; one per server. */
export class ServiceMetrics implements ServiceObserver {
  readonly #issued = new Map<string, { readonly labels: Readonly<Record<string, string>>; count: number }>();
  readonly #valid = { count: 0 };
  /** By `decision/rule`; a cell appears with its first decision (the rules are a small fixed set). */
  readonly #decisions: DecisionCells = new Map();
  readonly #exchanges: DecisionCells = new Map();
  readonly #invalid = new Map<VerifyFailureReason, { count: number }>(REASONS.map((reason) => [reason, { count: 0 }]));
  readonly #revocations = new Map<RevocationOutcome, { count: number }>(REVOCATION_OUTCOMES.map((outcome) => [outcome, { count: 0 }]));
  #state: ServiceState | undefined;

  constructor(registry: Registry) {
    registerComputed(registry, {
      name: 'jwt_grpc_tokens_issued_total',
      help: 'Tokens signed by GenerateJwt, by algorithm and kid.',
      type: 'counter',
      samples: () => [...this.#issued.values()].map(({ labels, count }) => ({ labels, value: count })),
    });
    registerComputed(registry, {
      name: 'jwt_grpc_verifications_total',
      help: 'Tokens verified by VerifyJwt, by result (valid, invalid) and reason (none, or the VerifyJwtResponse reason).',
      type: 'counter',
      samples: () => [
        { labels: { result: 'valid', reason: 'none' }, value: this.#valid.count },
        ...[...this.#invalid].map(([reason, { count }]) => ({ labels: { result: 'invalid', reason }, value: count })),
      ],
    });
    registerComputed(registry, {
      name: 'jwt_grpc_verify_cache_hits_total',
      help: 'VerifyJwt cache lookups that found the token verified already.',
      type: 'counter',
      samples: () => [{ labels: {}, value: this.#state?.cacheStats.hits ?? 0 }],
    });
    registerComputed(registry, {
      name: 'jwt_grpc_verify_cache_misses_total',
      help: 'VerifyJwt cache lookups that did not (the token was verified in full).',
      type: 'counter',
      samples: () => [{ labels: {}, value: this.#state?.cacheStats.misses ?? 0 }],
    });
    registerComputed(registry, {
      name: 'jwt_grpc_policy_decisions_total',
      help: 'GenerateJwt calls under the issuance policy, by decision (allow, deny, error) and rule (none, the policy rule or request.<field> a denied call broke, or unavailable/internal).',
      type: 'counter',
      samples: () => [...this.#decisions.values()].map(({ labels, count }) => ({ labels, value: count })),
    });
    registerComputed(registry, {
      name: 'jwt_grpc_token_exchanges_total',
      help: 'Token exchanges (ExchangeToken, POST /token), by decision (allow, deny, error) and rule (none, what refused it: subject_token, actor_token, may_act, policy, audiences, scopes, lifetime, rate, request.<field>; or unavailable/internal).',
      type: 'counter',
      samples: () => [...this.#exchanges.values()].map(({ labels, count }) => ({ labels, value: count })),
    });
    registerComputed(registry, {
      name: 'jwt_grpc_revocations_total',
      help: 'RevokeJwt calls by outcome: revoked, already (held already), invalid, denied, unauthenticated, unavailable (the store refused it).',
      type: 'counter',
      samples: () => [...this.#revocations].map(([outcome, { count }]) => ({ labels: { outcome }, value: count })),
    });
    registerComputed(registry, {
      name: 'jwt_grpc_key_backend_bad_signatures_total',
      help: 'Signatures an HSM or a KMS returned that did not verify with the key public key, by kid and backend: refused, never handed out.',
      type: 'counter',
      samples: () => keyBackendBadSignatures().map(({ labels, count }) => ({ labels, value: count })),
    });
    registerStoreGauge(registry, () => this.#state?.revocations);
    registerKeyGauge(registry, () => this.#state?.keys);
  }

  revocation(outcome: RevocationOutcome): void {
    const cell = this.#revocations.get(outcome);
    if (cell !== undefined) cell.count += 1;
  }

  /** The service whose keys and cache the scrape reads. */
  attach(state: ServiceState): void {
    this.#state = state;
  }

  tokenIssued(alg: string, kid: string): void {
    let cell = this.#issued.get(kid);
    if (cell === undefined) {
      cell = { labels: { alg, kid }, count: 0 };
      this.#issued.set(kid, cell);
    }
    cell.count += 1;
  }

  policyDecision(decision: PolicyDecision, rule: string): void {
    countDecision(this.#decisions, decision, rule);
  }

  exchangeDecision(decision: PolicyDecision, rule: string): void {
    countDecision(this.#exchanges, decision, rule);
  }

  verified(result: VerifyResult): void {
    const cell = result.valid ? this.#valid : this.#invalid.get(result.reason);
    if (cell !== undefined) cell.count += 1;
  }
}

/** Counts by (decision, rule), each cell made at its first count. */
type DecisionCells = Map<string, { readonly labels: Readonly<Record<string, string>>; count: number }>;

/** One more in the cell of (`decision`, `rule`), made at its first count. */
function countDecision(cells: DecisionCells, decision: PolicyDecision, rule: string): void {
  const key = `${decision}/${rule}`;
  let cell = cells.get(key);
  if (cell === undefined) {
    cell = { labels: { decision, rule }, count: 0 };
    cells.set(key, cell);
  }
  cell.count += 1;
}
