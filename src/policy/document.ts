/**
 * A policy: its shape, and its checker, which reads a policy against the shipped JSON Schema
 * (./schema.ts) so that the file an editor checks and the policy a server takes obey one set
 * of rules. Unknown fields are refused: a misspelt `audience` would otherwise mean "any
 * audience".
 */
import { JwtGrpcError } from '../base/errors.js';
import { type JsonSchema, SchemaProblem, readJson } from './json-schema.js';
import { JWT_POLICY_SCHEMA, MAX_RATE } from './schema.js';

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

/** Whether A and B are the same union of names. */
type SameNames<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Fields<T> = keyof T & string;
type AllTrue<T extends readonly true[]> = T;
/**
 * The types above and the schema name the same fields: a field added to one and not the
 * other fails to compile, since the checker returns what the schema declares, typed as
 * these. @internal
 */
export type SchemaNamesTheTypesFields = AllTrue<
  [
    SameNames<Fields<JwtPolicy> | '$schema', Fields<typeof JWT_POLICY_SCHEMA.properties>>,
    SameNames<Fields<CallerPolicy>, Fields<typeof JWT_POLICY_SCHEMA.$defs.caller.properties>>,
    SameNames<Fields<IssuanceRate>, Fields<typeof JWT_POLICY_SCHEMA.$defs.rate.properties>>,
    SameNames<Fields<ExchangeRule>, Fields<typeof JWT_POLICY_SCHEMA.$defs.exchangeRule.properties>>,
  ]
>;

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
    const { $schema: _, ...policy } = readJson(JWT_POLICY_SCHEMA as JsonSchema, value) as JwtPolicy & { $schema?: string };
    return policy;
  } catch (err) {
    if (!(err instanceof SchemaProblem)) throw err;
    throw new JwtGrpcError('ERR_INVALID_OPTION', `${source}: ${err.path}: ${err.message}`, { field: 'policy' });
  }
}
