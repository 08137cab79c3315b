/**
 * Reads a policy (a parsed JSON value) into a {@link JwtPolicy}, or says where it breaks
 * the rules of ./schema.ts: `$.callers["dns:a"].subjects[0]: must be ...`. Unknown
 * fields are refused: a misspelt `audience` would otherwise mean "any audience".
 */
import { JwtGrpcError } from '../base/errors.js';
import { nearestName } from '../base/known-options.js';
import { firstUnknownName } from '../base/unknown-name.js';

/**
 * How many tokens a caller may get: a token bucket of `burst` tokens refilled at
 * `perSecond`, so a caller may take `burst` at once, then `perSecond` a second.
 *
 * @example
 * ```ts
 * const rate: IssuanceRate = { perSecond: 20, burst: 100 };
 * ```
 */
export interface IssuanceRate {
  /** Tokens a second, more than 0 (a fraction: one token every few seconds), at most {@link MAX_RATE}. */
  readonly perSecond: number;
  /** Tokens at once, an integer from 1 to {@link MAX_RATE}. */
  readonly burst: number;
}

/**
 * The rate of a caller whose entry has no `rate`, when the policy has no `defaultRate`.
 * A workload keeps its token until near its expiry (lifetimes of minutes to hours; the
 * server's default is 2 h), so even a thousand replicas sharing one caller id ask well under
 * 100 a second, and a burst of 1000 lets such a fleet restart at once. At 100 a second one
 * caller needs 2^20 / 100 s, about 2.9 h, to take every index of a status list: longer than
 * the default lifetime, so its first tokens expire (and their indexes are free again)
 * before it can fill the list, where the 15,000 a second one caller reached took 70 s.
 *
 * @example
 * ```ts
 * const busy: CallerPolicy = { subjects: ['svc-batch'], rate: { ...DEFAULT_CALLER_RATE, perSecond: 500 } };
 * ```
 */
export const DEFAULT_CALLER_RATE: IssuanceRate = { perSecond: 100, burst: 1000 };

/**
 * The largest `perSecond` and `burst`: beyond a million a second, a rate no longer limits
 * anything one process signs, so this is the rate of a caller that is never held back.
 *
 * @example
 * ```ts
 * const unlimited: IssuanceRate = { perSecond: MAX_RATE, burst: MAX_RATE };
 * ```
 */
export const MAX_RATE = 1_000_000;

/**
 * What one caller may get from GenerateJwt. Fields: docs/policy.md.
 *
 * @example
 * ```ts
 * const orders: CallerPolicy = { subjects: ['svc-orders'], audiences: ['greeter', 'billing'], algorithms: ['ES256'], maxTtlSeconds: 600 };
 * ```
 */
export interface CallerPolicy {
  /** Subjects the caller may get; a trailing `*` matches any suffix, a lone `*` anything. Required. */
  readonly subjects: readonly string[];
  /** Audiences the caller may ask for, patterns as `subjects`. Omitted: any. */
  readonly audiences?: readonly string[];
  /** Algorithms the caller may ask for. Omitted: any the server signs with. */
  readonly algorithms?: readonly string[];
  /** Longest lifetime for this caller. Omitted: the server's maxTtlSeconds. */
  readonly maxTtlSeconds?: number;
  /** Custom claim names the caller may set in claims_json. Omitted: none. */
  readonly claims?: readonly string[];
  /** Bind this caller's tokens to its certificate. Default false. */
  readonly bind?: boolean;
  /** Tokens this caller may get, per process. Omitted: the policy's `defaultRate`, else {@link DEFAULT_CALLER_RATE}. */
  readonly rate?: IssuanceRate;
}

/**
 * Which caller may get which tokens: callers by id (a client certificate's URI SAN as
 * written, or `dns:` + its first DNS SAN). Schema: {@link JWT_POLICY_SCHEMA}.
 *
 * @example
 * ```ts
 * const policy: JwtPolicy = {
 *   callers: {
 *     'spiffe://example.org/ns/shop/sa/orders': { subjects: ['svc-orders'], audiences: ['greeter'] },
 *     'dns:reports.example.org': { subjects: ['report-*'] },
 *   },
 * };
 * ```
 */
export interface JwtPolicy {
  readonly callers: Readonly<Record<string, CallerPolicy>>;
  /** Caller ids allowed to revoke tokens, beside the admin secret. */
  readonly revokers?: readonly string[];
  /** The rate of every caller whose entry has none. Omitted: {@link DEFAULT_CALLER_RATE}. */
  readonly defaultRate?: IssuanceRate;
}

class PolicyProblem extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

const CALLER_FIELDS = new Set(['subjects', 'audiences', 'algorithms', 'maxTtlSeconds', 'claims', 'bind', 'rate']);
const TOP_FIELDS = new Set(['$schema', 'callers', 'revokers', 'defaultRate']);
const RATE_FIELDS = new Set(['perSecond', 'burst']);

function key(path: string, name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? `${path}.${name}` : `${path}[${JSON.stringify(name)}]`;
}

/** A field the schema lacks, with the nearest one it has when one is close (the rule of every option: src/base/known-options.ts). */
function unknownField(path: string, name: string, fields: readonly string[]): PolicyProblem {
  const nearest = nearestName(name, fields);
  const hint = nearest === undefined ? '' : `; did you mean ${key(path, nearest)}?`;
  return new PolicyProblem(key(path, name), `is not a field (expected one of ${fields.join(', ')})${hint}`);
}

function object(value: unknown, path: string, fields: ReadonlySet<string> | undefined): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new PolicyProblem(path, 'must be an object');
  if (fields !== undefined) {
    const known = [...fields];
    const name = firstUnknownName(value, known);
    if (name !== undefined) throw unknownField(path, name, known);
  }
  return value as Record<string, unknown>;
}

function strings(value: unknown, path: string, { minItems, patterns }: { minItems: number; patterns: boolean }): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw new PolicyProblem(path, 'must be an array of strings');
  if (value.length < minItems) throw new PolicyProblem(path, `must hold at least ${minItems} entry`);
  value.forEach((entry: unknown, index) => {
    const at = `${path}[${index}]`;
    if (typeof entry !== 'string' || entry.length === 0) throw new PolicyProblem(at, 'must be a non-empty string');
    if (patterns && entry.indexOf('*') !== -1 && entry.indexOf('*') !== entry.length - 1)
      throw new PolicyProblem(at, `"${entry}": "*" may only end a pattern`);
  });
  return value as string[];
}

function issuanceRate(value: unknown, path: string): IssuanceRate | undefined {
  if (value === undefined) return undefined;
  const { perSecond, burst } = object(value, path, RATE_FIELDS);
  if (perSecond === undefined) throw new PolicyProblem(`${path}.perSecond`, 'is required');
  if (burst === undefined) throw new PolicyProblem(`${path}.burst`, 'is required');
  if (typeof perSecond !== 'number' || !(perSecond > 0 && perSecond <= MAX_RATE))
    throw new PolicyProblem(`${path}.perSecond`, `must be a number above 0, at most ${MAX_RATE}, got ${JSON.stringify(perSecond)}`);
  if (!Number.isInteger(burst) || (burst as number) < 1 || (burst as number) > MAX_RATE)
    throw new PolicyProblem(`${path}.burst`, `must be an integer from 1 to ${MAX_RATE}, got ${JSON.stringify(burst)}`);
  return { perSecond, burst: burst as number };
}

function callerPolicy(value: unknown, path: string): CallerPolicy {
  const entry = object(value, path, CALLER_FIELDS);
  const subjects = strings(entry['subjects'], `${path}.subjects`, { minItems: 1, patterns: true });
  if (subjects === undefined) throw new PolicyProblem(`${path}.subjects`, 'is required');
  const audiences = strings(entry['audiences'], `${path}.audiences`, { minItems: 1, patterns: true });
  const algorithms = strings(entry['algorithms'], `${path}.algorithms`, { minItems: 1, patterns: false });
  const claims = strings(entry['claims'], `${path}.claims`, { minItems: 0, patterns: false });
  const { maxTtlSeconds, bind } = entry;
  if (maxTtlSeconds !== undefined && !(Number.isInteger(maxTtlSeconds) && (maxTtlSeconds as number) >= 1)) {
    throw new PolicyProblem(`${path}.maxTtlSeconds`, `must be an integer of at least 1, got ${JSON.stringify(maxTtlSeconds)}`);
  }
  if (bind !== undefined && typeof bind !== 'boolean') throw new PolicyProblem(`${path}.bind`, 'must be true or false');
  const rate = issuanceRate(entry['rate'], `${path}.rate`);
  return {
    subjects,
    ...(audiences !== undefined && { audiences }),
    ...(algorithms !== undefined && { algorithms }),
    ...(maxTtlSeconds !== undefined && { maxTtlSeconds: maxTtlSeconds as number }),
    ...(claims !== undefined && { claims }),
    ...(bind !== undefined && { bind }),
    ...(rate !== undefined && { rate }),
  };
}

function readPolicy(value: unknown): JwtPolicy {
  const top = object(value, '$', TOP_FIELDS);
  if (top['callers'] === undefined) throw new PolicyProblem('$.callers', 'is required');
  const callersValue = object(top['callers'], '$.callers', undefined);
  const callers: Record<string, CallerPolicy> = Object.create(null) as Record<string, CallerPolicy>;
  for (const [id, entry] of Object.entries(callersValue)) {
    if (id.length === 0) throw new PolicyProblem('$.callers[""]', 'a caller id may not be empty');
    callers[id] = callerPolicy(entry, key('$.callers', id));
  }
  const revokers = strings(top['revokers'], '$.revokers', { minItems: 0, patterns: false });
  const defaultRate = issuanceRate(top['defaultRate'], '$.defaultRate');
  return { callers, ...(revokers !== undefined && { revokers }), ...(defaultRate !== undefined && { defaultRate }) };
}

/**
 * Checks a policy given in code, or parsed from a file named `source`; throws
 * `ERR_INVALID_OPTION` whose message names the source, the JSON path and the problem.
 *
 * @example
 * ```ts
 * const policy = checkPolicy({ callers: { 'dns:reports.example.org': { subjects: ['report-*'] } } });
 * ```
 */
export function checkPolicy(value: unknown, source = 'option policy'): JwtPolicy {
  try {
    return readPolicy(value);
  } catch (err) {
    if (!(err instanceof PolicyProblem)) throw err;
    throw new JwtGrpcError('ERR_INVALID_OPTION', `${source}: ${err.path}: ${err.message}`, { field: 'policy' });
  }
}
