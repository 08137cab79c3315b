import { createRequire } from 'node:module';
import type { Metadata, ServerErrorResponse, ServerInterceptor, ServerListener, StatusObject } from '@grpc/grpc-js';
import { JwtGrpcError } from '../errors.js';
import { grpcJs } from '../optional-deps.js';
import { Status } from '../transport/service.js';
import type { JwtPayload } from '../tokens/result.js';
import { type AuthOutcome, type JwtAuthInterceptorOptions, type TokenVerifier, createAuthenticator } from './authenticate.js';

/**
 * The verified payload of each authenticated call, keyed by the request's Metadata object.
 * grpc-js hands a server interceptor's listener the request metadata and passes whatever
 * object the listener forwards to the handler as `call.metadata`: that one object is what
 * the interceptor and the handler share. A client controls header names and values, never
 * object identity, so no header it sends can put an entry here.
 */
const claimsByRequest = new WeakMap<Metadata, JwtPayload>();

/**
 * Anything a grpc-js handler receives as `call`: unary and streaming calls all carry `metadata`.
 *
 * @example
 * ```ts
 * function subjectOf(call: CallWithMetadata): string {
 *   return verifiedClaims(call).sub;
 * }
 * ```
 */
export interface CallWithMetadata {
  readonly metadata: Metadata;
}

/**
 * The payload {@link jwtAuthInterceptor} verified for this call. Frozen; never read from a
 * header. Fails closed: when the call has no verified claims (a public method, a server
 * without the interceptor, metadata replaced by a later interceptor), it throws an
 * UNAUTHENTICATED status error that a grpc-js handler can pass to its callback (or throw:
 * grpc-js then ends the call UNKNOWN), never returns undefined. For methods that also
 * serve anonymous callers, use {@link optionalVerifiedClaims}.
 *
 * The interceptor keys the claims by the Metadata object it passes on: an interceptor
 * placed after it that replaces `metadata` with a copy hides them. Put jwtAuthInterceptor
 * last, or have later ones pass metadata on.
 *
 * @example
 * ```ts
 * server.addService(Greeter.service, {
 *   Hello(call, callback) {
 *     try {
 *       callback(null, { message: `hello ${verifiedClaims(call).sub}` });
 *     } catch (err) {
 *       callback(err as ServerErrorResponse);
 *     }
 *   },
 * });
 * ```
 */
export function verifiedClaims(call: CallWithMetadata): JwtPayload {
  const claims = claimsByRequest.get(call.metadata);
  if (claims === undefined) throw unauthenticated('no verified token on this call (is jwtAuthInterceptor installed, and the method not public?)');
  return claims;
}

/**
 * The payload {@link jwtAuthInterceptor} verified for this call, or undefined when there
 * is none: for methods in `publicMethods`, which anonymous callers may reach. Elsewhere
 * use {@link verifiedClaims}, which fails closed.
 *
 * @example
 * ```ts
 * function greeting(call: CallWithMetadata): string {
 *   return `hello ${optionalVerifiedClaims(call)?.sub ?? 'stranger'}`;
 * }
 * ```
 */
export function optionalVerifiedClaims(call: CallWithMetadata): JwtPayload | undefined {
  return claimsByRequest.get(call.metadata);
}

/** An error grpc-js understands as a status (numeric `code`, `details`, `metadata`). */
function unauthenticated(details: string): ServerErrorResponse & StatusObject {
  const metadata = new (grpcJs().Metadata)();
  return Object.assign(new Error(`UNAUTHENTICATED: ${details}`), { code: Status.UNAUTHENTICATED, details, metadata });
}

/** Server interceptors came with @grpc/grpc-js 1.10: an older one would ignore the interceptor and let every call in. */
function requireServerInterceptors(): typeof import('@grpc/grpc-js').ServerInterceptingCall {
  const { ServerInterceptingCall } = grpcJs();
  if (typeof ServerInterceptingCall === 'function') return ServerInterceptingCall;
  const version = (createRequire(import.meta.url)('@grpc/grpc-js/package.json') as { version: string }).version;
  throw new JwtGrpcError(
    'ERR_GRPC_JS_VERSION',
    `jwtAuthInterceptor needs @grpc/grpc-js >= 1.10 (server interceptors); the installed @grpc/grpc-js ${version} ` +
      'would ignore it and let every call in unauthenticated',
  );
}

/**
 * A grpc-js server interceptor (gRFC L112: `new Server({ interceptors: [...] })`) that lets
 * a call reach its handler only with a valid `authorization: Bearer <jwt>`. Otherwise the
 * call ends UNAUTHENTICATED before the handler runs, its details saying why: `missing
 * token`, or the verifier's reason and message (`EXPIRED: token has expired (exp)`,
 * `AUDIENCE_MISMATCH: ...`). Handlers read the verified payload with {@link verifiedClaims}.
 * Methods in `publicMethods` (gRPC health by default) pass without a token.
 *
 * `verifier` is {@link createRemoteVerifier}'s (keys from the issuer's GetJwks) or
 * {@link createVerifier}'s (keys in hand). A verifier that rejects with a
 * {@link GrpcStatusError} (a remote one that never reached its issuer: UNAVAILABLE) ends
 * the call with that status; any other failure ends it INTERNAL, without the cause.
 *
 * @example
 * ```ts
 * import { Server } from '@grpc/grpc-js';
 * import { createJwtClient, createRemoteVerifier, jwtAuthInterceptor } from 'jwt-grpc';
 *
 * const verifier = createRemoteVerifier(createJwtClient('jwt.internal:50051', { credentials: tls }));
 * const server = new Server({ interceptors: [jwtAuthInterceptor(verifier, { audience: 'payments' })] });
 * ```
 */
export function jwtAuthInterceptor(verifier: TokenVerifier, options: JwtAuthInterceptorOptions = {}): ServerInterceptor {
  const ServerInterceptingCall = requireServerInterceptors();
  const Metadata = grpcJs().Metadata;
  const authenticator = createAuthenticator(verifier, options);

  return (method, call) => {
    if (authenticator.isPublic(method.path)) return new ServerInterceptingCall(call);
    const listener: ServerListener = {
      onReceiveMetadata(metadata, next) {
        const settle = (outcome: AuthOutcome): void => {
          if ('claims' in outcome) {
            claimsByRequest.set(metadata, outcome.claims);
            next(metadata);
          } else {
            call.sendStatus({ code: outcome.status, details: outcome.details, metadata: new Metadata() });
          }
        };
        const outcome = authenticator.authenticate(metadata.get(authenticator.metadataKey));
        if ('then' in outcome) outcome.then(settle);
        else settle(outcome);
      },
    };
    return new ServerInterceptingCall(call, { start: (next) => next(listener) });
  };
}
