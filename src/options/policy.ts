/**
 * Reads a policy (a parsed JSON value) into a {@link JwtPolicy}, or says where it breaks
 * the rules of ../policy/schema.ts: `$.callers["dns:a"].subjects[0]: must be ...`. Unknown
 * fields are refused: a misspelt `audience` would otherwise mean "any audience".
 */
import { JwtGrpcError } from '../errors.js';
import type { OptionKind } from './kinds.js';
import { nearestName } from '../known-options.js';
import { firstUnknownName } from '../unknown-name.js';

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
 * Who may exchange which subjects' tokens for which audiences and scopes (ExchangeToken and
 * the token endpoint, docs/token-exchange.md). An exchange must match a rule: its subject
 * (as the trust file maps it) one of `subjects`, its actor one of `actors` (a rule without
 * `actors` matches only a subject trading its own token), every audience one of `audiences`.
 *
 * @example
 * ```ts
 * const rule: ExchangeRule = { subjects: ['k8s:shop/*'], actors: ['spiffe://example.org/ns/shop/sa/orders'], audiences: ['billing'] };
 * ```
 */
export interface ExchangeRule {
  /** Subjects (after the trust file's mapping) whose tokens the rule lets be exchanged; patterns as a caller's `subjects`. Required. */
  readonly subjects: readonly string[];
  /** Who may exchange them on the subject's behalf: a client certificate's caller id, or an actor token's mapped subject. Omitted: no actor. */
  readonly actors?: readonly string[];
  /** Audiences (or resources) the new token may be for, patterns as `subjects`. Required. */
  readonly audiences: readonly string[];
  /** Scopes the new token may carry, patterns. Omitted: any of the subject token's. */
  readonly scopes?: readonly string[];
  /** Scopes granted by name even when the subject token lacks them. Omitted: none; an exchange never widens. */
  readonly grantScopes?: readonly string[];
  /** Longest lifetime of the new token. Omitted: the trust file's and the server's. */
  readonly maxTtlSeconds?: number;
  /** The new token may outlive the subject token (up to `maxTtlSeconds`). Default false: at most its remaining life. */
  readonly outliveSubject?: boolean;
  /** Exchanges this rule allows, per process, all its subjects together. Omitted: the policy's `defaultRate`, else {@link DEFAULT_CALLER_RATE}. */
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
  /** Who may exchange which tokens (docs/token-exchange.md). Omitted under a policy: every exchange is refused. */
  readonly exchange?: readonly ExchangeRule[];
}

/** Where a JSON document breaks its schema, and how: thrown by the readers below, turned into one message by their callers. @internal */
export class PolicyProblem extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

const CALLER_FIELDS = new Set(['subjects', 'audiences', 'algorithms', 'maxTtlSeconds', 'claims', 'bind', 'rate']);
const TOP_FIELDS = new Set(['$schema', 'callers', 'revokers', 'defaultRate', 'exchange']);
const EXCHANGE_FIELDS = new Set(['subjects', 'actors', 'audiences', 'scopes', 'grantScopes', 'maxTtlSeconds', 'outliveSubject', 'rate']);
const RATE_FIELDS = new Set(['perSecond', 'burst']);

/** `path` followed by member `name`, as a JSON path: `$.a` or `$["dns:a"]`. @internal */
export function key(path: string, name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? `${path}.${name}` : `${path}[${JSON.stringify(name)}]`;
}

/** A field the schema lacks, with the nearest one it has when one is close (the rule of every option: src/known-options.ts). */
function unknownField(path: string, name: string, fields: readonly string[]): PolicyProblem {
  const nearest = nearestName(name, fields);
  const hint = nearest === undefined ? '' : `; did you mean ${key(path, nearest)}?`;
  return new PolicyProblem(key(path, name), `is not a field (expected one of ${fields.join(', ')})${hint}`);
}

/** `value` as an object holding no field outside `fields` (any, when undefined). @internal */
export function object(value: unknown, path: string, fields: ReadonlySet<string> | undefined): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new PolicyProblem(path, 'must be an object');
  if (fields !== undefined) {
    const known = [...fields];
    const name = firstUnknownName(value, known);
    if (name !== undefined) throw unknownField(path, name, known);
  }
  return value as Record<string, unknown>;
}

/** `value` as an array of non-empty strings (patterns: a `*` only at the end), or undefined when absent. @internal */
export function strings(
  value: unknown,
  path: string,
  { minItems, patterns }: { minItems: number; patterns: boolean },
): string[] | undefined {
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

/** A positive integer number of seconds, or undefined when absent. @internal */
export function seconds(value: unknown, path: string): number | undefined {
  if (value === undefined) return undefined;
  if (!(Number.isInteger(value) && (value as number) >= 1))
    throw new PolicyProblem(path, `must be an integer of at least 1, got ${JSON.stringify(value)}`);
  return value as number;
}

function exchangeRule(value: unknown, path: string): ExchangeRule {
  const entry = object(value, path, EXCHANGE_FIELDS);
  const patterns = (name: string, minItems: number) => strings(entry[name], `${path}.${name}`, { minItems, patterns: true });
  const subjects = patterns('subjects', 1);
  if (subjects === undefined) throw new PolicyProblem(`${path}.subjects`, 'is required');
  const audiences = patterns('audiences', 1);
  if (audiences === undefined)
    throw new PolicyProblem(`${path}.audiences`, 'is required: a token without an audience would pass every verifier that asks for none');
  const actors = patterns('actors', 1);
  const scopes = patterns('scopes', 0);
  const grantScopes = strings(entry['grantScopes'], `${path}.grantScopes`, { minItems: 0, patterns: false });
  const maxTtlSeconds = seconds(entry['maxTtlSeconds'], `${path}.maxTtlSeconds`);
  const outliveSubject = entry['outliveSubject'];
  if (outliveSubject !== undefined && typeof outliveSubject !== 'boolean')
    throw new PolicyProblem(`${path}.outliveSubject`, 'must be true or false');
  const rate = issuanceRate(entry['rate'], `${path}.rate`);
  return {
    subjects,
    audiences,
    ...(actors !== undefined && { actors }),
    ...(scopes !== undefined && { scopes }),
    ...(grantScopes !== undefined && { grantScopes }),
    ...(maxTtlSeconds !== undefined && { maxTtlSeconds }),
    ...(outliveSubject !== undefined && { outliveSubject }),
    ...(rate !== undefined && { rate }),
  };
}

function exchangeRules(value: unknown): ExchangeRule[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw new PolicyProblem('$.exchange', 'must be an array of rules');
  return value.map((rule, index) => exchangeRule(rule, `$.exchange[${index}]`));
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
  const exchange = exchangeRules(top['exchange']);
  return {
    callers,
    ...(revokers !== undefined && { revokers }),
    ...(defaultRate !== undefined && { defaultRate }),
    ...(exchange !== undefined && { exchange }),
  };
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

/** The `policy` option's kind (src/options/table.ts): checked once at start, on the command line read from a JSON file. @internal */
export const policyKind: OptionKind<JwtPolicy> = {
  check: (value, label) => checkPolicy(value, `option ${label}`),
  show: () => 'a policy',
  range: '',
  placeholder: '',
};
