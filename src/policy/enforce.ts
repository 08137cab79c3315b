/**
 * A policy enforced at GenerateJwt: the caller's entry is looked up once per call, each
 * rule checked in turn, and the first one broken answers PERMISSION_DENIED naming it.
 * Nothing is signed for a refused call. @internal
 */
import { performance } from 'node:perf_hooks';
import type { CallerIdentity } from '../contracts/handler-api.js';
import { JwtGrpcError } from '../base/errors.js';
import { DEFAULT_CALLER_RATE, type IssuanceRate } from './document.js';
import type { CallerPolicy, JwtPolicy } from './document.js';

/** The rules a decision names: a policy field, or `caller` for a caller the policy does not know. */
export type PolicyRule = 'caller' | 'subjects' | 'audiences' | 'algorithms' | 'maxTtlSeconds' | 'claims' | 'bind' | 'rate';

/** Claims the service sets itself; anything else in a token came from claims_json. */
const SERVICE_CLAIMS = new Set(['sub', 'iat', 'exp', 'jti', 'iss', 'aud']);

/** A name pattern: exact, a prefix (trailing `*`), or anything (`*`). @internal */
export function matcher(patterns: readonly string[]): (name: string) => boolean {
  const exact = new Set(patterns.filter((p) => !p.endsWith('*')));
  const prefixes = patterns.filter((p) => p.endsWith('*')).map((p) => p.slice(0, -1));
  if (prefixes.includes('')) return () => true;
  return (name) => exact.has(name) || prefixes.some((prefix) => name.startsWith(prefix));
}

interface CompiledCaller {
  readonly id: string;
  readonly entry: CallerPolicy;
  readonly subject: (name: string) => boolean;
  /** The subject of a request that names none: the first entry without `*`. */
  readonly fixedSubject: string | undefined;
  readonly audience: ((name: string) => boolean) | undefined;
  readonly anyAudience: boolean;
  readonly algorithms: ReadonlySet<string> | undefined;
  readonly claims: ReadonlySet<string>;
  readonly bucket: RateBucket;
}

/**
 * A caller's token bucket: `burst` tokens, refilled at `perSecond` on a monotonic clock
 * (a wall clock set back would otherwise stop a caller). One per caller id in the policy,
 * so their number is the policy's size whatever callers connect.
 */
class RateBucket {
  #tokens: number;
  #atMs: number;

  constructor(
    readonly rate: IssuanceRate,
    nowMs: number,
    tokens = rate.burst,
  ) {
    this.#tokens = Math.min(tokens, rate.burst);
    this.#atMs = nowMs;
  }

  /** The tokens left at `nowMs`, refilled since the last look. */
  left(nowMs: number): number {
    this.#tokens = Math.min(this.rate.burst, this.#tokens + ((nowMs - this.#atMs) * this.rate.perSecond) / 1000);
    this.#atMs = nowMs;
    return this.#tokens;
  }

  /** Takes one token; false when none is left. */
  take(nowMs: number): boolean {
    if (this.left(nowMs) < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

/** What the policy reads of a GenerateJwt request (jwt-service's GenerateJwtRequest has these fields). */
export interface IssuanceRequest {
  readonly algorithm: string;
  readonly subject: string;
  readonly audience: string;
  readonly ttl_seconds: number;
}

/** A request the policy let through, with the subject and lifetime it settled. */
export interface Granted<R extends IssuanceRequest = IssuanceRequest> {
  readonly callerId: string;
  readonly entry: CallerPolicy;
  readonly request: R;
}

/** A request the policy refuses (`ERR_PERMISSION_DENIED`, answered PERMISSION_DENIED), naming the rule it broke. */
export class PolicyDenied extends JwtGrpcError {
  constructor(
    readonly rule: PolicyRule,
    readonly callerId: string | undefined,
    problem: string,
  ) {
    super('ERR_PERMISSION_DENIED', `policy rule "${rule}": ${problem}`);
  }
}

/**
 * A GenerateJwt over the caller's rate (`ERR_RATE_LIMITED`, answered RESOURCE_EXHAUSTED),
 * naming the rate; rule `rate` in the audit line and the metric.
 */
export class RateLimited extends JwtGrpcError {
  readonly rule = 'rate';

  constructor(
    readonly callerId: string,
    rate: IssuanceRate,
  ) {
    super(
      'ERR_RATE_LIMITED',
      `policy rule "rate": caller ${callerId} is over its rate (${rate.perSecond} tokens/s, burst ${rate.burst}); retry later`,
    );
  }
}

export class IssuancePolicy {
  readonly #callers = new Map<string, CompiledCaller>();
  /** One bucket per exchange rule, in the order of `policy.exchange`. */
  readonly #exchanges: readonly RateBucket[];

  /**
   * `previous`: the policy this one replaces; a caller keeps what is left of its bucket, so
   * a reload does not hand every caller a fresh burst.
   */
  constructor(
    readonly policy: JwtPolicy,
    previous?: IssuancePolicy,
  ) {
    const nowMs = performance.now();
    for (const [id, entry] of Object.entries(policy.callers)) {
      const rate = entry.rate ?? policy.defaultRate ?? DEFAULT_CALLER_RATE;
      const left = previous === undefined ? undefined : previous.#callers.get(id)?.bucket.left(nowMs);
      this.#callers.set(id, {
        id,
        entry,
        subject: matcher(entry.subjects),
        fixedSubject: entry.subjects.find((subject) => !subject.includes('*')),
        audience: entry.audiences === undefined ? undefined : matcher(entry.audiences),
        anyAudience: entry.audiences === undefined || entry.audiences.includes('*'),
        algorithms: entry.algorithms === undefined ? undefined : new Set(entry.algorithms),
        claims: new Set(entry.claims ?? []),
        bucket: new RateBucket(rate, nowMs, left),
      });
    }
    // A reload keeps what is left of the bucket of the rule at the same place.
    const before = previous === undefined ? [] : previous.#exchanges;
    this.#exchanges = (policy.exchange ?? []).map(
      (rule, index) => new RateBucket(rule.rate ?? policy.defaultRate ?? DEFAULT_CALLER_RATE, nowMs, before[index]?.left(nowMs)),
    );
  }

  /** Takes one token of the rate of exchange rule `index` (of `policy.exchange`); the rate when none is left, else undefined. */
  takeExchange(index: number): IssuanceRate | undefined {
    const bucket = this.#exchanges[index];
    return bucket === undefined || bucket.take(performance.now()) ? undefined : bucket.rate;
  }

  /**
   * Checks every rule a request shows before signing, then takes one token of the caller's
   * rate; throws {@link PolicyDenied}, or {@link RateLimited} over the rate.
   * `defaultTtl` and `maxTtl` are the server's: a request without ttl_seconds gets the
   * default, lowered to the caller's maximum.
   */
  authorize<R extends IssuanceRequest>(caller: CallerIdentity | undefined, request: R, defaultTtl: number): Granted<R> {
    const id = caller?.id;
    if (id === undefined) {
      throw new PolicyDenied(
        'caller',
        undefined,
        caller === undefined
          ? 'the call has no verified client certificate (serve mutual TLS)'
          : 'the client certificate names no URI or DNS SAN',
      );
    }
    const rules = this.#callers.get(id);
    if (rules === undefined) throw new PolicyDenied('caller', id, `caller ${id} is not in the policy`);
    let subject = request.subject;
    if (subject.length === 0) {
      if (rules.fixedSubject === undefined)
        throw new PolicyDenied('subjects', id, `the request names no subject and caller ${id} has none without "*"`);
      subject = rules.fixedSubject;
    } else if (!rules.subject(subject)) {
      throw new PolicyDenied('subjects', id, `caller ${id} may not get subject ${JSON.stringify(subject)}`);
    }
    if (request.audience.length === 0 ? !rules.anyAudience : rules.audience !== undefined && !rules.audience(request.audience)) {
      // A token without aud is accepted by every verifier that does not ask for one: only a caller allowed any audience gets one.
      const what = request.audience.length === 0 ? 'a token without an audience' : `audience ${JSON.stringify(request.audience)}`;
      throw new PolicyDenied('audiences', id, `caller ${id} may not get ${what}`);
    }
    if (rules.algorithms !== undefined && !rules.algorithms.has(request.algorithm)) {
      throw new PolicyDenied('algorithms', id, `caller ${id} may not get algorithm ${JSON.stringify(request.algorithm)}`);
    }
    const maxTtl = rules.entry.maxTtlSeconds;
    let ttl = request.ttl_seconds;
    if (maxTtl !== undefined) {
      if (ttl === 0) ttl = Math.min(defaultTtl, maxTtl);
      else if (ttl > maxTtl)
        throw new PolicyDenied('maxTtlSeconds', id, `caller ${id} may get tokens of at most ${maxTtl} s, asked for ${ttl} s`);
    }
    // Last: only a request the policy would sign takes one of the caller's tokens.
    if (!rules.bucket.take(performance.now())) throw new RateLimited(id, rules.bucket.rate);
    return { callerId: id, entry: rules.entry, request: { ...request, subject, ttl_seconds: ttl } };
  }

  /** Checks the custom claims about to be signed (claims_json, once parsed) against the caller's `claims`. */
  checkClaims(granted: Granted, claims: Readonly<Record<string, unknown>>): void {
    const allowed = this.#callers.get(granted.callerId)?.claims;
    for (const name of Object.keys(claims)) {
      if (SERVICE_CLAIMS.has(name) || allowed?.has(name) === true) continue;
      throw new PolicyDenied('claims', granted.callerId, `caller ${granted.callerId} may not set claim ${JSON.stringify(name)}`);
    }
  }
}
