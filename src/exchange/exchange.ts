/**
 * Token exchange (RFC 8693) up to the signature: the request checked, the subject and actor
 * tokens verified through the trust file, the policy's rule found, the scope and lifetime
 * narrowed, and the claims of the new token built. JwtServiceCore signs them.
 */
import type { ExchangeRule, JwtPolicy } from '../policy/document.js';
import { type IssuancePolicy, matcher } from '../policy/enforce.js';
import { newJti } from '../tokens/jti.js';
import type { CallerIdentity } from '../contracts/handler-api.js';
import type { ExchangeTokenRequest } from '../jwt-service/messages.js';
import type { VerifyResult, JwtPayload } from '../tokens/result.js';
import type { TrustedIssuer } from './trust.js';
import { ExchangeRefused } from './refusal.js';

/** The grant type of token exchange (RFC 8693 section 2.1). */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';

/** The token type URIs of RFC 8693 section 3 that name a JWT: the only tokens this server reads or issues. */
export const TOKEN_TYPES = {
  jwt: 'urn:ietf:params:oauth:token-type:jwt',
  accessToken: 'urn:ietf:params:oauth:token-type:access_token',
  idToken: 'urn:ietf:params:oauth:token-type:id_token',
} as const;

const INPUT_TYPES: ReadonlySet<string> = new Set(Object.values(TOKEN_TYPES));

/** A scope-token of RFC 6749 section 3.3: printable ASCII but space, `"` and `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/** Which token of a request: the names of RFC 8693 section 2.1, which errors and audit lines use. */
export type TokenRole = 'subject_token' | 'actor_token';

/** A subject or actor token that verified, with what the trust file makes of it. @internal */
export interface TrustedToken {
  /** The issuer's `iss`; undefined for this server's own tokens when it has no issuer. */
  readonly iss: string | undefined;
  /** Whether this server issued it. */
  readonly own: boolean;
  readonly entry: Omit<TrustedIssuer, 'jwksUrl' | 'jwksFile'>;
  readonly payload: JwtPayload;
  /** The subject as the trust file maps it. */
  readonly subject: string;
}

/** How the server's own tokens are verified for an exchange (JwtServiceCore hands it to the trust). @internal */
export interface OwnTokens {
  /** The server's `issuer` option: the `iss` of the tokens it signs. */
  readonly issuer: string | undefined;
  /** Verifies a token with the server's keys (`iss` checked, no audience), a revoked one refused. */
  verify(token: string): VerifyResult;
}

/**
 * The issuers whose tokens an exchange takes (the trust file, src/exchange/issuers.ts):
 * a token verified and mapped, or refused with an {@link ExchangeRefused}. @internal
 */
export interface TokenTrust {
  verify(token: string, role: TokenRole): Promise<TrustedToken>;
  /** Fetches the external issuers' keys now; never rejects (a failure is logged). */
  warm(): Promise<void>;
}

/** What an exchange reads of the server's options. @internal */
export interface ExchangeLimits {
  readonly issuer: string | undefined;
  readonly defaultTtlSeconds: number;
  readonly maxTtlSeconds: number;
  readonly maxTokenLength: number;
  readonly maxSubjectLength: number;
}

/** An exchange decided: the claims to sign and what the answer says of them. @internal */
export interface ExchangeDecision {
  readonly sub: string;
  readonly claims: Record<string, unknown>;
  readonly ttl: number;
  readonly issuedTokenType: string;
  /** The scope of the new token, for the answer when it is not the one asked ('' when it has none). */
  readonly scope: string;
  readonly scopeNarrowed: boolean;
  /** Who acted, for the audit line; undefined when the subject traded its own token. */
  readonly actor: string | undefined;
  readonly subjectIssuer: string | undefined;
  readonly targets: readonly string[];
}

function checkToken(request: ExchangeTokenRequest, role: 'subject' | 'actor', limits: ExchangeLimits): void {
  const token = request[`${role}_token`];
  const type = request[`${role}_token_type`];
  if (role === 'subject' && token.length === 0) throw ExchangeRefused.request('subject_token', 'is required');
  if (token.length > limits.maxTokenLength)
    throw ExchangeRefused.request(`${role}_token`, `is ${token.length} characters; the limit is ${limits.maxTokenLength}`);
  if (token.length === 0) {
    if (type.length > 0) throw ExchangeRefused.request('actor_token_type', 'is given without actor_token');
    return;
  }
  if (type.length === 0) throw ExchangeRefused.request(`${role}_token_type`, `is required with ${role}_token`);
  if (!INPUT_TYPES.has(type))
    throw ExchangeRefused.request(
      `${role}_token_type`,
      `${JSON.stringify(type.slice(0, 100))} is not a JWT type this server reads (${[...INPUT_TYPES].join(', ')})`,
    );
}

/** The targets asked for: the audience and the resource (an absolute URI), each at most once. */
function targetsOf(request: ExchangeTokenRequest, limits: ExchangeLimits): string[] {
  const targets: string[] = [];
  for (const field of ['audience', 'resource'] as const) {
    const value = request[field];
    if (value.length === 0) continue;
    if (value.length > limits.maxSubjectLength)
      throw ExchangeRefused.request(field, `is longer than ${limits.maxSubjectLength} characters`);
    if (field === 'resource' && (!URL.canParse(value) || value.includes('#')))
      throw ExchangeRefused.request('resource', 'must be an absolute URI without a fragment (RFC 8707 section 2)');
    if (!targets.includes(value)) targets.push(value);
  }
  // A token without aud would pass every verifier that does not ask for one.
  if (targets.length === 0) throw ExchangeRefused.request('audience', 'audience or resource is required: the service the new token is for');
  return targets;
}

function parseScope(scope: string, field: string): string[] {
  if (scope.length === 0) return [];
  const values = scope.split(' ');
  for (const value of values)
    if (!SCOPE_TOKEN.test(value))
      throw ExchangeRefused.request(field, 'must be scope tokens separated by single spaces (RFC 6749 section 3.3)');
  return [...new Set(values)];
}

/** The scopes a token carries: `scope` (RFC 8693 section 4.2), else a `scp` array of strings. */
function tokenScopes(token: TrustedToken): Set<string> {
  const { scope, scp } = token.payload;
  if (typeof scope === 'string') return new Set(scope.split(' ').filter((one) => one.length > 0));
  if (Array.isArray(scp)) return new Set(scp.filter((one): one is string => typeof one === 'string'));
  return new Set();
}

/** The policy's rule for this subject, actor and targets; undefined in open mode. */
function ruleFor(
  policy: JwtPolicy | undefined,
  subject: string,
  actor: string | undefined,
  targets: readonly string[],
): ExchangeRule | undefined {
  if (policy === undefined) return undefined;
  const who = actor === undefined ? `subject ${JSON.stringify(subject)}` : `actor ${JSON.stringify(actor)}`;
  const candidates = (policy.exchange ?? []).filter(
    (rule) =>
      matcher(rule.subjects)(subject) &&
      (actor === undefined ? rule.actors === undefined : rule.actors !== undefined && matcher(rule.actors)(actor)),
  );
  if (candidates.length === 0)
    throw ExchangeRefused.denied('policy', `policy: no exchange rule lets ${who} exchange tokens of subject ${JSON.stringify(subject)}`);
  const rule = candidates.find((one) => targets.every(matcher(one.audiences)));
  if (rule === undefined)
    throw ExchangeRefused.target(
      `policy: no exchange rule lets ${who} get a token for ${targets.map((one) => JSON.stringify(one)).join(' and ')}`,
    );
  return rule;
}

/** The scope of the new token: the one asked, at most the subject token's (and the rule's grants), within the rule's `scopes`. */
function narrowScope(asked: readonly string[], held: ReadonlySet<string>, rule: ExchangeRule | undefined): string[] {
  const allowed = rule?.scopes === undefined ? () => true : matcher(rule.scopes);
  if (asked.length === 0) return [...held].filter(allowed);
  const granted = new Set(rule?.grantScopes ?? []);
  for (const scope of asked) {
    if (!held.has(scope) && !granted.has(scope))
      throw ExchangeRefused.scope(`scope ${JSON.stringify(scope)} is not in the subject token's scope: an exchange never widens`);
    if (!allowed(scope)) throw ExchangeRefused.scope(`policy: scope ${JSON.stringify(scope)} is not among the rule's scopes`);
  }
  return [...asked];
}

/** The lifetime of the new token: the server's default, lowered to every maximum, and to the subject token's remaining life. */
function lifetime(subject: TrustedToken, rule: ExchangeRule | undefined, limits: ExchangeLimits, nowSeconds: number): number {
  let ttl = Math.min(
    limits.defaultTtlSeconds,
    limits.maxTtlSeconds,
    subject.entry.maxTtlSeconds ?? Infinity,
    rule?.maxTtlSeconds ?? Infinity,
  );
  if (rule?.outliveSubject !== true) ttl = Math.min(ttl, subject.payload.exp - nowSeconds);
  if (ttl < 1) throw ExchangeRefused.denied('lifetime', 'subject_token: expires within a second; the new token may not outlive it');
  return ttl;
}

/** One token of `rule`'s rate, or the refusal of an exchange over it. */
function takeRate(policy: IssuancePolicy, rule: ExchangeRule): void {
  const index = (policy.policy.exchange ?? []).indexOf(rule);
  const over = policy.takeExchange(index);
  if (over !== undefined) throw ExchangeRefused.rate(index, over);
}

/** The subject token's `may_act` (RFC 8693 section 4.4), honoured: only the actor it names may act. */
function checkMayAct(subject: TrustedToken, actor: { id: string; iss: string | undefined } | undefined): void {
  const mayAct = subject.payload['may_act'];
  if (mayAct === undefined || actor === undefined) return;
  const named = mayAct as { sub?: unknown; iss?: unknown } | null;
  if (typeof named !== 'object' || named === null || named.sub !== actor.id || (named.iss !== undefined && named.iss !== actor.iss))
    throw ExchangeRefused.denied('may_act', `subject_token: its may_act does not name actor ${JSON.stringify(actor.id)}`);
}

/** The `act` claim (RFC 8693 section 4.1): the actor now, the subject token's own `act` nested as the one before. */
function actClaim(actor: { id: string; iss: string | undefined }, subject: TrustedToken): Record<string, unknown> {
  const prior = subject.payload['act'];
  return {
    sub: actor.id,
    ...(actor.iss !== undefined && { iss: actor.iss }),
    ...(typeof prior === 'object' && prior !== null && !Array.isArray(prior) && { act: prior }),
  };
}

/**
 * Decides an exchange for `caller` (its client certificate is the actor when no actor
 * token is given): refused with an {@link ExchangeRefused}, or the claims to sign. @internal
 */
export async function decideExchange(
  request: ExchangeTokenRequest,
  caller: CallerIdentity | undefined,
  context: {
    readonly issuers: TokenTrust;
    readonly policy: IssuancePolicy | undefined;
    readonly limits: ExchangeLimits;
    readonly nowSeconds: number;
  },
): Promise<ExchangeDecision> {
  const { issuers, policy, limits, nowSeconds } = context;
  checkToken(request, 'subject', limits);
  checkToken(request, 'actor', limits);
  const requested = request.requested_token_type;
  if (requested !== '' && requested !== TOKEN_TYPES.accessToken && requested !== TOKEN_TYPES.jwt)
    throw ExchangeRefused.request('requested_token_type', `this server issues ${TOKEN_TYPES.accessToken} or ${TOKEN_TYPES.jwt} only`);
  const targets = targetsOf(request, limits);
  const asked = parseScope(request.scope, 'scope');
  const subject = await issuers.verify(request.subject_token, 'subject_token');
  let actor: { id: string; iss: string | undefined } | undefined;
  if (request.actor_token.length > 0) {
    const verified = await issuers.verify(request.actor_token, 'actor_token');
    actor = { id: verified.subject, iss: verified.iss };
  } else if (caller?.id !== undefined) actor = { id: caller.id, iss: undefined };
  // A mapped subject or actor is the issuer's text: held to the longest subject this server signs.
  if (subject.subject.length > limits.maxSubjectLength)
    throw ExchangeRefused.token('subject_token', `maps to a subject longer than ${limits.maxSubjectLength} characters`);
  if (actor !== undefined && actor.id.length > limits.maxSubjectLength)
    throw ExchangeRefused.token('actor_token', `maps to a subject longer than ${limits.maxSubjectLength} characters`);
  // A subject trading its own token has no actor.
  if (actor?.id === subject.subject) actor = undefined;
  checkMayAct(subject, actor);
  const rule = ruleFor(policy?.policy, subject.subject, actor?.id, targets);
  const scope = narrowScope(asked, tokenScopes(subject), rule);
  const ttl = lifetime(subject, rule, limits, nowSeconds);
  // Last: only an exchange the policy would sign takes one of its rule's tokens.
  if (policy !== undefined && rule !== undefined) takeRate(policy, rule);
  const claims: Record<string, unknown> = { sub: subject.subject, iat: nowSeconds, exp: nowSeconds + ttl, jti: newJti() };
  if (limits.issuer !== undefined) claims['iss'] = limits.issuer;
  claims['aud'] = targets.length === 1 ? targets[0] : targets;
  if (scope.length > 0) claims['scope'] = scope.join(' ');
  if (actor !== undefined) claims['act'] = actClaim(actor, subject);
  // A delegated token traded by its subject stays delegated: its act goes on as it was.
  else if (typeof subject.payload['act'] === 'object' && subject.payload['act'] !== null) claims['act'] = subject.payload['act'];
  if (caller?.id !== undefined) claims['client_id'] = caller.id;
  for (const name of subject.entry.claims ?? []) if (subject.payload[name] !== undefined) claims[name] = subject.payload[name];
  return {
    sub: subject.subject,
    claims,
    ttl,
    issuedTokenType: requested === TOKEN_TYPES.jwt ? TOKEN_TYPES.jwt : TOKEN_TYPES.accessToken,
    scope: scope.join(' '),
    scopeNarrowed: scope.join(' ') !== asked.join(' '),
    actor: actor?.id,
    subjectIssuer: subject.iss,
    targets,
  };
}
