import { invalidOption } from '../base/errors.js';
import { ANY_AUDIENCE, type AnyAudience, type ClaimExpectations, audienceOption } from '../tokens/claims.js';
import type { JwtPayload, VerifyResult } from '../tokens/result.js';
import { GrpcStatusError, GrpcStatus, type StatusCode } from '../contracts/handler-api.js';
import { AUTH_INTERCEPTOR_DEFAULTS } from '../client/defaults.js';
import type { AuthorizeCall, MethodRule, UnlistedMethods } from './authorize.js';
import { stringOption } from '../client/options.js';
import { optionNames, refuseUnknownOptions } from '../base/known-options.js';

/**
 * Anything that verifies a token: {@link createVerifier}'s, {@link createRemoteVerifier}'s, or your own.
 * jwtAuthInterceptor passes its `audience` and `issuer` as `expect`; an `expect.audience`
 * of {@link ANY_AUDIENCE} asks for no audience check.
 *
 * @example
 * ```ts
 * // hidden: declare const keys: KeySet;
 * // hidden: import type { ChannelCredentials } from '@grpc/grpc-js';
 * // hidden: declare const tls: ChannelCredentials;
 * const local: TokenVerifier = createVerifier(keys, { audience: 'payments' });
 * const remote: TokenVerifier = createRemoteVerifier(createJwtClient('jwt.internal:50051', { credentials: tls }), { audience: 'payments' });
 * ```
 */
export interface TokenVerifier {
  verify(token: string, expect?: ClaimExpectations): VerifyResult | Promise<VerifyResult>;
  /**
   * The audience it checks when a call names none (createVerifier's and
   * createRemoteVerifier's always have one). Without it, {@link jwtAuthInterceptor}
   * requires its own `audience` option.
   */
  readonly audience?: string | AnyAudience;
}

/**
 * Options of {@link jwtAuthInterceptor}; validated once, when the interceptor is made.
 *
 * @example
 * ```ts
 * const options: JwtAuthInterceptorOptions = {
 *   audience: 'payments',
 *   publicMethods: ['/grpc.health.v1.Health/Check', '/payments.Payments/Status'],
 * };
 * ```
 */
export interface JwtAuthInterceptorOptions {
  /**
   * Required `aud`, or {@link ANY_AUDIENCE} to accept tokens for any audience. Default: the
   * verifier's own `audience` (createVerifier's and createRemoteVerifier's); with a verifier
   * that has none, leaving it out throws ERR_INVALID_OPTION.
   */
  readonly audience?: string | AnyAudience;
  /** Required `iss`. Default: the verifier's own, else not checked. */
  readonly issuer?: string;
  /**
   * Full method paths (`/package.Service/Method`) that pass without a token; their
   * handlers see no claims. Replaces the default, gRPC health's Check and Watch.
   */
  readonly publicMethods?: readonly string[];
  /** Metadata key carrying `Bearer <jwt>`. Default `authorization`. */
  readonly metadataKey?: string;
  /**
   * What a token must carry to call a method, by full method path: required `scopes`,
   * allowed `subjects` or `clientIds`. A verified token that breaks its method's rule is
   * PERMISSION_DENIED, naming what it lacks; `{}` lets any verified token in. On
   * createJwtServer, a path that names no method the server serves stops `listen`
   * (ERR_INVALID_OPTION, naming the nearest served method). Default: none.
   */
  readonly methods?: Readonly<Record<string, MethodRule>>;
  /**
   * What a verified token may do on a method that is neither public nor in `methods`:
   * `'deny'` answers PERMISSION_DENIED, `'allow-any-valid-token'` lets it in (then
   * `authorize` decides, when given). Default: `'deny'` once `methods` names a rule (a
   * method left out, or a misspelt path, then refuses rather than admits), else
   * `'allow-any-valid-token'` (authentication only).
   */
  readonly unlistedMethods?: UnlistedMethods;
  /**
   * Decides each verified call after `methods`: `true` lets it in, `false` answers
   * PERMISSION_DENIED, a thrown GrpcStatusError answers its status. Default: none.
   */
  readonly authorize?: (claims: JwtPayload, call: AuthorizeCall) => boolean | PromiseLike<boolean>;
}

/** The names {@link JwtAuthInterceptorOptions} holds; an object with another is refused. */
export const AUTH_INTERCEPTOR_OPTION_NAMES = optionNames<JwtAuthInterceptorOptions>({
  audience: true,
  issuer: true,
  publicMethods: true,
  metadataKey: true,
  methods: true,
  unlistedMethods: true,
  authorize: true,
});

/** A call let in, with the payload its token carries, or refused with a status and why. */
export type AuthOutcome = { readonly claims: JwtPayload } | { readonly status: StatusCode; readonly details: string };

/**
 * The transport-free half of an auth interceptor, its options validated once: which
 * methods are public, where the token is, and the decision on a call's metadata values.
 * @internal
 */
export interface Authenticator {
  readonly metadataKey: string;
  isPublic(methodPath: string): boolean;
  /** Decides on the values of `metadataKey`; synchronously when the verifier answers synchronously. */
  authenticate(values: readonly unknown[]): AuthOutcome | Promise<AuthOutcome>;
}

const BEARER = /^Bearer +([^ ]+) *$/i;

function validatePublicMethods(value: unknown): ReadonlySet<string> {
  if (value === undefined) return new Set(AUTH_INTERCEPTOR_DEFAULTS.publicMethods);
  if (!Array.isArray(value)) throw invalidOption('publicMethods', 'must be an array of method paths');
  for (const path of value) {
    if (typeof path !== 'string' || !/^\/[^/]+\/[^/]+$/.test(path)) {
      throw invalidOption('publicMethods', `${JSON.stringify(path)} is not a full method path like "/package.Service/Method"`);
    }
  }
  return new Set(value as string[]);
}

function metadataKeyOption(value: unknown): string {
  const key = stringOption('metadataKey', value) ?? AUTH_INTERCEPTOR_DEFAULTS.metadataKey;
  if (!/^[0-9a-z_.-]+$/.test(key) || key.endsWith('-bin') || key.startsWith('grpc-')) {
    throw invalidOption('metadataKey', `${JSON.stringify(key)} must be a lower-case ASCII header name, not -bin or grpc-`);
  }
  return key;
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

const refused = (details: string): AuthOutcome => ({ status: GrpcStatus.UNAUTHENTICATED, details });

/** A status a refusal may end a call with: an error code of gRPC (1 to 16), never OK. */
function isErrorStatus(status: unknown): status is StatusCode {
  return typeof status === 'number' && Number.isInteger(status) && status >= 1 && status <= 16;
}

/**
 * What a verifier or an authorize hook threw, as a refusal: its own GrpcStatusError when
 * that names an error status (UNAVAILABLE for an unreachable issuer); anything else, OK
 * included (which would end the call as a success without its handler), INTERNAL with
 * `details` and without the cause. @internal
 */
export function failedStep(err: unknown, details: string): AuthOutcome {
  if (err instanceof GrpcStatusError && isErrorStatus(err.status)) return { status: err.status, details: err.details };
  return { status: GrpcStatus.INTERNAL, details };
}

const verifierFailed = (err: unknown): AuthOutcome => failedStep(err, 'token verification failed');

/**
 * A verifier's answer as an outcome. Only `valid: true` with a payload object admits; an
 * answer that is no VerifyResult at all (a verifier of one's own gone wrong) is INTERNAL.
 */
function outcomeOf(result: VerifyResult): AuthOutcome {
  const answer = result as Partial<VerifyResult> | null | undefined;
  if (answer?.valid === true && typeof answer.payload === 'object' && answer.payload !== null) return { claims: answer.payload };
  if (answer?.valid === false) return refused(`${answer.reason}: ${answer.message}`);
  return { status: GrpcStatus.INTERNAL, details: 'token verification failed' };
}

/** Whether the verifier checks an audience of its own (or ANY_AUDIENCE, on purpose) when a call names none. */
function hasOwnAudience(verifier: TokenVerifier): boolean {
  const own = verifier.audience;
  return own === ANY_AUDIENCE || (typeof own === 'string' && own.length > 0);
}

/** @internal validates the options of jwtAuthInterceptor and binds them */
export function createAuthenticator(verifier: TokenVerifier, options: JwtAuthInterceptorOptions): Authenticator {
  if (typeof verifier?.verify !== 'function') throw invalidOption('verifier', 'must have a verify(token, expect) method');
  refuseUnknownOptions(options, AUTH_INTERCEPTOR_OPTION_NAMES, { owner: 'jwtAuthInterceptor' });
  const audience = audienceOption(options.audience, !hasOwnAudience(verifier));
  const issuer = stringOption('issuer', options.issuer);
  const expect: ClaimExpectations | undefined = audience === undefined && issuer === undefined ? undefined : { audience, issuer };
  const publicMethods = validatePublicMethods(options.publicMethods);
  const metadataKey = metadataKeyOption(options.metadataKey);

  return {
    metadataKey,
    isPublic: (methodPath) => publicMethods.has(methodPath),
    authenticate(values) {
      if (values.length === 0) return refused('missing token');
      if (values.length > 1) return refused(`more than one ${metadataKey} header`);
      const value = values[0];
      const match = typeof value === 'string' ? BEARER.exec(value) : null;
      if (match === null) return refused(`${metadataKey} is not "Bearer <token>"`);
      let outcome: VerifyResult | PromiseLike<VerifyResult>;
      try {
        outcome = verifier.verify(match[1] as string, expect);
      } catch (err) {
        return verifierFailed(err);
      }
      // A synchronous verifier (createVerifier's) answers in the same turn: no promise per call.
      // Promise.resolve: a thenable whose then throws is a rejection here, not a throw out of the call.
      return isPromiseLike(outcome) ? Promise.resolve(outcome).then(outcomeOf, verifierFailed) : outcomeOf(outcome);
    },
  };
}
