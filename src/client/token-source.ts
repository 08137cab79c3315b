import { ALGORITHMS, isAlgorithm } from '../algorithms/names.js';
import { invalidOption } from '../base/errors.js';
import { type Logger, createStderrLogger } from '../base/log.js';
import { RESERVED_CLAIMS } from '../jwt-service/request-claims.js';
import { GrpcStatus } from '../contracts/handler-api.js';
import { CALL_CREDENTIALS_DEFAULTS } from './defaults.js';
import type { JwtClient } from './jwt-client.js';
import { integerOption, stringOption } from './options.js';
import { optionNames, refuseUnknownOptions } from '../base/known-options.js';
import { singleFlight } from './single-flight.js';
import { statusName } from './status.js';

/**
 * What {@link jwtCallCredentials} needs of a {@link JwtClient}: any object with these two members does.
 *
 * @example
 * ```ts
 * // hidden: import type { ChannelCredentials } from '@grpc/grpc-js';
 * // hidden: declare const tls: ChannelCredentials;
 * const issuer: TokenIssuer = createJwtClient('jwt.internal:50051', { credentials: tls });
 * ```
 */
export type TokenIssuer = Pick<JwtClient, 'target' | 'generateJwt'>;

/**
 * Options of {@link jwtCallCredentials}: the token asked for, and how long it is kept.
 *
 * @example
 * ```ts
 * const options: JwtCallCredentialsOptions = { algorithm: 'ES256', subject: 'svc-orders', audience: 'payments', ttlSeconds: 900, claims: { scope: 'pay' } };
 * ```
 */
export interface JwtCallCredentialsOptions {
  /** Algorithm the issuer signs with, e.g. `ES256`; it must be configured there. */
  readonly algorithm: string;
  /** `sub` of the tokens. Default: the issuer's subject pool picks one. */
  readonly subject?: string;
  /** `aud` of the tokens: the service the calls go to. Default: none. */
  readonly audience?: string;
  /** Lifetime asked for, in seconds. Default: the issuer's default (7200 for jwt-grpc). */
  readonly ttlSeconds?: number;
  /**
   * Extra claims asked for (GenerateJwt's `claims_json`), e.g. `{ scope: 'greet' }` for a
   * service whose rule requires that scope. The issuer's policy decides which names a
   * caller may set (`claims` in its entry) and refuses the others (PERMISSION_DENIED).
   * Must survive JSON unchanged (no undefined, functions, non-finite numbers, dates,
   * class instances), and may not set the claims the issuer sets itself (`iss`, `sub`,
   * `aud`, `exp`, `nbf`, `iat`, `jti`, `client_id`, `cnf`, `status`). Default: none.
   */
  readonly claims?: Readonly<Record<string, unknown>>;
  /** Replace the token this long before its `exp` (at the latest at half its lifetime). Default 60. */
  readonly refreshBeforeSeconds?: number;
  /** Where failed background refreshes are reported. Default: stderr, warnings and errors. */
  readonly logger?: Logger;
}

/** The names {@link JwtCallCredentialsOptions} holds; an object with another is refused. */
const CALL_CREDENTIALS_OPTION_NAMES = optionNames<JwtCallCredentialsOptions>({
  algorithm: true,
  subject: true,
  audience: true,
  ttlSeconds: true,
  claims: true,
  refreshBeforeSeconds: true,
  logger: true,
});

/** A source of tokens: one held until its refresh point, one fetch in flight at a time. */
export interface TokenSource {
  /**
   * A token valid now. When none can be had, rejects with an error naming the issuer, coded
   * UNAUTHENTICATED or PERMISSION_DENIED when the issuer refused the request, else UNAVAILABLE.
   */
  token(): Promise<string>;
  /**
   * Drops the held token, so that the next call fetches a new one: the service refused it
   * (revoked, or signed with a key it no longer trusts). At most once per `retryMs`: a
   * service that refuses every token does not turn each call into a GenerateJwt.
   */
  invalidate(): void;
}

interface HeldToken {
  readonly jwt: string;
  /** `exp` in ms: the token is not sent after it. */
  readonly expiresAtMs: number;
  /** From here on the token is still sent, while a replacement is fetched in the background. */
  readonly refreshAtMs: number;
}

/**
 * The error a grpc-js metadata generator must give to fail a call with a chosen status:
 * grpc-js reads a numeric `code` (a {@link JwtGrpcError}'s code is a string) and puts
 * `message` in the call's details.
 */
export type CallCredentialsError = Error & { readonly code: number };

/**
 * What the issuer's answers mean for the call waiting on a token. Asking again cannot
 * change a refusal (a bad request, an algorithm not configured, a subject not allowed):
 * the call fails with PERMISSION_DENIED or UNAUTHENTICATED, which grpc-js passes through
 * from call credentials and clients do not retry (gRFC A54 turns INVALID_ARGUMENT and the
 * like into INTERNAL: https://github.com/grpc/proposal/blob/master/A54-restrict-control-plane-status-codes.md).
 * Everything else (the issuer down, slow, overloaded, a non-status error) is transient:
 * UNAVAILABLE, which clients may retry.
 */
const PERMANENT_REFUSALS: ReadonlyMap<number, number> = new Map([
  [GrpcStatus.PERMISSION_DENIED, GrpcStatus.PERMISSION_DENIED],
  [GrpcStatus.UNAUTHENTICATED, GrpcStatus.UNAUTHENTICATED],
  [GrpcStatus.INVALID_ARGUMENT, GrpcStatus.UNAUTHENTICATED],
  [GrpcStatus.FAILED_PRECONDITION, GrpcStatus.UNAUTHENTICATED],
  [GrpcStatus.NOT_FOUND, GrpcStatus.UNAUTHENTICATED],
  [GrpcStatus.OUT_OF_RANGE, GrpcStatus.UNAUTHENTICATED],
  [GrpcStatus.UNIMPLEMENTED, GrpcStatus.UNAUTHENTICATED],
]);

function issuerStatus(err: unknown): number | undefined {
  return typeof err === 'object' && err !== null && 'status' in err && 'details' in err ? Number(err.status) : undefined;
}

/** The error that fails a call waiting on a token: the issuer's refusal as PERMISSION_DENIED or UNAUTHENTICATED, anything else UNAVAILABLE. @internal */
export function tokenFailure(message: string, cause: unknown): CallCredentialsError {
  const from = issuerStatus(cause);
  const code = (from === undefined ? undefined : PERMANENT_REFUSALS.get(from)) ?? GrpcStatus.UNAVAILABLE;
  return Object.assign(new Error(message, { cause }), { code });
}

/** An issuer's failure in words: its status and details, or the error's message. @internal */
export function describeFailure(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'status' in err && 'details' in err) {
    return `${statusName(Number(err.status))}: ${String(err.details)}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** Where in `value` JSON would change it (a value it drops, rewrites or cannot write), or undefined when it round-trips. */
function jsonProblem(value: unknown, path: string): string | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(value) ? undefined : `${path} is ${value}, which JSON writes as null`;
    case 'object': {
      if (value === null) return undefined;
      if (Array.isArray(value)) {
        for (const [index, item] of value.entries()) {
          const problem = jsonProblem(item, `${path}[${index}]`);
          if (problem !== undefined) return problem;
        }
        return undefined;
      }
      const prototype: unknown = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) return `${path} is not a plain object (JSON would rewrite it)`;
      if (Object.getOwnPropertySymbols(value).length > 0) return `${path} has a symbol key, which JSON drops`;
      for (const [key, item] of Object.entries(value)) {
        const problem = jsonProblem(item, `${path}.${key}`);
        if (problem !== undefined) return problem;
      }
      return undefined;
    }
    default:
      return `${path} is ${typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`}, which JSON cannot carry`;
  }
}

/** `claims` as GenerateJwt's `claims_json`, checked once: a plain object, JSON-exact, no claim the issuer sets. */
function claimsJson(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.getPrototypeOf(value) !== Object.prototype) {
    throw invalidOption('claims', 'must be a plain object of claim names to values');
  }
  for (const name of Object.keys(value)) {
    // The issuer would refuse them on the first call; refused here, at creation.
    if (RESERVED_CLAIMS.has(name))
      throw invalidOption(`claims.${name}`, 'is set by the issuer; use subject, audience or ttlSeconds, or leave it to the issuer');
  }
  const problem = jsonProblem(value, 'claims');
  if (problem !== undefined) throw invalidOption('claims', `${problem}: claims must survive JSON unchanged`);
  return Object.keys(value).length === 0 ? '' : JSON.stringify(value);
}

/** @internal the cache behind jwtCallCredentials, transport-free */
export function createTokenSource(client: TokenIssuer, options: JwtCallCredentialsOptions): TokenSource {
  if (typeof client?.generateJwt !== 'function') throw invalidOption('client', 'must be a JwtClient (createJwtClient)');
  refuseUnknownOptions(options, CALL_CREDENTIALS_OPTION_NAMES, { owner: 'jwtCallCredentials' });
  const { algorithm } = options;
  if (!isAlgorithm(algorithm))
    throw invalidOption('algorithm', `must be one of ${ALGORITHMS.join(', ')}, got ${JSON.stringify(algorithm)}`);
  const request = {
    algorithm,
    subject: stringOption('subject', options.subject) ?? '',
    audience: stringOption('audience', options.audience) ?? '',
    ttl_seconds: integerOption('ttlSeconds', options.ttlSeconds, 0, 0, 10 * 365 * 86_400),
    claims_json: claimsJson(options.claims),
  };
  const logger = options.logger ?? createStderrLogger();
  const refreshBeforeMs =
    1000 * integerOption('refreshBeforeSeconds', options.refreshBeforeSeconds, CALL_CREDENTIALS_DEFAULTS.refreshBeforeSeconds, 0, 86_400);

  let held: HeldToken | undefined;
  /** After a failed fetch, background refreshes wait until then: a down issuer is not asked on every call. */
  let retryAtMs = 0;
  /** A token dropped by invalidate before then is kept: one drop per retryMs. */
  let invalidateAfterMs = 0;

  const fetch = singleFlight(async (): Promise<HeldToken> => {
    try {
      const response = await client.generateJwt(request);
      const now = Date.now();
      const expiresAtMs = response.expires_at * 1000;
      // A short-lived token would otherwise be refreshed on every call.
      const refreshAtMs = Math.max(now + (expiresAtMs - now) / 2, expiresAtMs - refreshBeforeMs);
      held = { jwt: response.jwt, expiresAtMs, refreshAtMs };
      return held;
    } catch (err) {
      retryAtMs = Date.now() + CALL_CREDENTIALS_DEFAULTS.retryMs;
      throw tokenFailure(`cannot get a token from issuer ${client.target}: ${describeFailure(err)}`, err);
    }
  });

  return {
    async token() {
      const now = Date.now();
      const current = held;
      if (current === undefined || now >= current.expiresAtMs) return (await fetch.run()).jwt;
      if (now >= current.refreshAtMs && now >= retryAtMs && !fetch.running) {
        fetch.run().catch((err: unknown) => {
          logger.warn('token refresh failed; the current token is sent until it expires', {
            issuer: client.target,
            error: (err as Error).message,
            expiresInSeconds: Math.round((current.expiresAtMs - Date.now()) / 1000),
          });
        });
      }
      return current.jwt;
    },
    invalidate() {
      const now = Date.now();
      if (held === undefined || now < invalidateAfterMs) return;
      held = undefined;
      invalidateAfterMs = now + CALL_CREDENTIALS_DEFAULTS.retryMs;
    },
  };
}
