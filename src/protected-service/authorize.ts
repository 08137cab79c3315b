/**
 * Authorization after authentication, for jwtAuthInterceptor: declarative rules per full
 * method name and a hook of one's own. A token that verified but may not call the method
 * is PERMISSION_DENIED; one that did not verify stays UNAUTHENTICATED (authenticate.ts).
 */
import { invalidOption } from '../base/errors.js';
import { optionNames, refuseUnknownOptions } from '../base/known-options.js';
import type { JwtPayload } from '../tokens/result.js';
import { GrpcStatus, GrpcStatusError } from '../contracts/handler-api.js';

/**
 * What a token must carry to call one method; every field given must hold.
 *
 * @example
 * ```ts
 * const rule: MethodRule = { scopes: ['orders:write'], clientIds: ['spiffe://example.org/ns/shop/sa/orders'] };
 * ```
 */
export interface MethodRule {
  /** Scope values the token's `scope` claim (space-separated, RFC 9068 section 2.2.3) must all include. */
  readonly scopes?: readonly string[];
  /** Subjects allowed (`sub`). */
  readonly subjects?: readonly string[];
  /** Callers allowed (`client_id`, the issuer's caller id). */
  readonly clientIds?: readonly string[];
}

/** The names a {@link MethodRule} holds; a rule with another is refused. */
const METHOD_RULE_NAMES = optionNames<MethodRule>({ scopes: true, subjects: true, clientIds: true });

/**
 * The call an `authorize` hook decides on, on either kind of server.
 *
 * @example
 * ```ts
 * const authorize = (claims: JwtPayload, call: AuthorizeCall): boolean => !call.method.endsWith('/Delete') || claims.sub === 'admin';
 * ```
 */
export interface AuthorizeCall {
  /** The full method path, `/package.Service/Method`. */
  readonly method: string;
  /** The call's metadata (this package's CallMetadata, or grpc-js's Metadata). */
  readonly metadata: object;
}

/**
 * What jwtAuthInterceptor does with a verified call to a method that is neither public nor
 * in `methods`: refuse it (PERMISSION_DENIED), or let any valid token in.
 *
 * @example
 * ```ts
 * // hidden: declare const verifier: RemoteVerifier;
 * const unlisted: UnlistedMethods = 'deny';
 * const auth = jwtAuthInterceptor(verifier, { methods: { '/demo.Greeter/Hello': { scopes: ['greet'] } }, unlistedMethods: unlisted });
 * ```
 */
export type UnlistedMethods = 'deny' | 'allow-any-valid-token';

const UNLISTED_METHODS: readonly UnlistedMethods[] = ['deny', 'allow-any-valid-token'];

/** The authorization options of jwtAuthInterceptor. @internal */
export interface AuthorizeOptions {
  readonly methods?: Readonly<Record<string, MethodRule>>;
  readonly unlistedMethods?: UnlistedMethods;
  readonly authorize?: (claims: JwtPayload, call: AuthorizeCall) => boolean | PromiseLike<boolean>;
}

/** Decides a verified call: undefined to let it in, else the refusal; a promise only when the hook answers with one. @internal */
export type Authorizer = (
  claims: JwtPayload,
  call: AuthorizeCall,
) => GrpcStatusError | undefined | PromiseLike<GrpcStatusError | undefined>;

function denied(method: string, why: string): GrpcStatusError {
  return new GrpcStatusError(GrpcStatus.PERMISSION_DENIED, `${method}: ${why}`);
}

function ruleProblem(rule: MethodRule, claims: JwtPayload, method: string): GrpcStatusError | undefined {
  const payload = claims as Record<string, unknown>;
  if (rule.scopes !== undefined) {
    const granted = typeof payload['scope'] === 'string' ? new Set(payload['scope'].split(' ')) : new Set<string>();
    const missing = rule.scopes.find((scope) => !granted.has(scope));
    if (missing !== undefined) return denied(method, `the token lacks scope "${missing}"`);
  }
  if (rule.subjects !== undefined && (typeof claims.sub !== 'string' || !rule.subjects.includes(claims.sub))) {
    return denied(method, `subject ${JSON.stringify(claims.sub ?? null)} may not call it`);
  }
  const clientId = payload['client_id'];
  if (rule.clientIds !== undefined && (typeof clientId !== 'string' || !rule.clientIds.includes(clientId))) {
    return denied(method, `client_id ${JSON.stringify(clientId ?? null)} may not call it`);
  }
  return undefined;
}

function checkRules(value: unknown): ReadonlyMap<string, MethodRule> {
  const rules = new Map<string, MethodRule>();
  if (value === undefined) return rules;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalidOption('methods', 'must be an object of method paths to rules');
  for (const [path, rule] of Object.entries(value)) {
    if (!/^\/[^/]+\/[^/]+$/.test(path))
      throw invalidOption('methods', `${JSON.stringify(path)} is not a full method path like "/package.Service/Method"`);
    if (typeof rule !== 'object' || rule === null) throw invalidOption(`methods["${path}"]`, 'must be an object');
    refuseUnknownOptions(rule, METHOD_RULE_NAMES, { path: `methods["${path}"]`, owner: 'a method rule' });
    for (const [field, list] of Object.entries(rule as Record<string, unknown>)) {
      if (!Array.isArray(list) || !list.every((entry) => typeof entry === 'string' && entry.length > 0)) {
        throw invalidOption(`methods["${path}"].${field}`, 'must be an array of non-empty strings');
      }
    }
    rules.set(path, rule as MethodRule);
  }
  return rules;
}

/**
 * `unlistedMethods`, or its default: deny once there are rules (a method left out of them,
 * or a path misspelt, is then refused, not admitted by any valid token), else allow.
 */
function unlistedOption(value: unknown, hasRules: boolean): UnlistedMethods {
  if (value === undefined) return hasRules ? 'deny' : 'allow-any-valid-token';
  if (!UNLISTED_METHODS.includes(value as UnlistedMethods)) {
    throw invalidOption(
      'unlistedMethods',
      `must be ${UNLISTED_METHODS.map((name) => `'${name}'`).join(' or ')}, got ${JSON.stringify(value)}`,
    );
  }
  return value as UnlistedMethods;
}

/** The authorizer of the options, validated once; undefined when there is nothing to authorize. @internal */
export function createAuthorizer(options: AuthorizeOptions): Authorizer | undefined {
  const rules = checkRules(options.methods);
  const denyUnlisted = unlistedOption(options.unlistedMethods, rules.size > 0) === 'deny';
  const hook = options.authorize;
  if (hook !== undefined && typeof hook !== 'function') throw invalidOption('authorize', 'must be a function (claims, call) => boolean');
  if (rules.size === 0 && hook === undefined && !denyUnlisted) return undefined;
  const byHook = (allowed: boolean, method: string): GrpcStatusError | undefined =>
    allowed === true ? undefined : denied(method, 'not authorized');
  return (claims, call) => {
    const rule = rules.get(call.method);
    if (rule === undefined && denyUnlisted) return denied(call.method, "no rule in methods names it, and unlistedMethods is 'deny'");
    const problem = rule === undefined ? undefined : ruleProblem(rule, claims, call.method);
    if (problem !== undefined || hook === undefined) return problem;
    const answer = hook(claims, call);
    return typeof answer === 'boolean'
      ? byHook(answer, call.method)
      : Promise.resolve(answer).then((allowed) => byHook(allowed, call.method));
  };
}
