import type { Buffer } from 'node:buffer';
import { createRequire } from 'node:module';
import type {
  Metadata as GrpcMetadata,
  ServerErrorResponse,
  ServerInterceptingCallInterface,
  ServerInterceptor as GrpcServerInterceptor,
  ServerListener,
  StatusObject,
} from '@grpc/grpc-js';
import { JwtGrpcError } from '../base/errors.js';
import { grpcJs } from '../base/optional-deps.js';
import type { JwtPayload } from '../tokens/result.js';
import { type CallContext, type CallInterceptor, CallMetadata, GrpcStatus, GrpcStatusError } from '../contracts/handler-api.js';
import { endVerifySpan, startVerifySpan, verifyIn } from '../tracing/auth-span.js';
import { peerThumbprint } from './bound-token.js';
import { createAuthorizer } from './authorize.js';
import { type JwtAuthInterceptorOptions, type TokenVerifier, createAuthenticator } from './authenticate.js';
import { type CallPolicy, type DecisionTrace, type Verdict, decide, refusalError } from './decide.js';
import { refuseUnservedPaths } from './served-methods.js';

/**
 * The verified payload of each authenticated call, keyed by the request's metadata object.
 * grpc-js hands a server interceptor's listener the request metadata and passes whatever
 * object the listener forwards to the handler as `call.metadata`; on createJwtServer's
 * transports `call.metadata` is one object for the call's life. That one object is what
 * the interceptor and the handler share. A client controls header names and values, never
 * object identity, so no header it sends can put an entry here.
 */
const claimsByRequest = new WeakMap<object, JwtPayload>();

/**
 * Anything a handler receives as `call`: a grpc-js call (unary or streaming) or a
 * createJwtServer handler's {@link CallContext}; all carry `metadata`.
 *
 * @example
 * ```ts
 * function subjectOf(call: CallWithMetadata): string | undefined {
 *   return verifiedClaims(call).sub;
 * }
 * ```
 */
export interface CallWithMetadata {
  readonly metadata: object;
}

/**
 * The payload {@link jwtAuthInterceptor} verified for this call. Frozen; never read from a
 * header. Fails closed: when the call has no verified claims (a public method, a server
 * without the interceptor, metadata replaced by a later interceptor), it throws
 * UNAUTHENTICATED, never returns undefined: on createJwtServer a {@link GrpcStatusError}
 * the call ends with; on grpc-js a status error a handler passes to its callback (thrown,
 * grpc-js ends the call UNKNOWN). For methods that also serve anonymous callers, use
 * {@link optionalVerifiedClaims}.
 *
 * The interceptor keys the claims by the metadata object it passes on: an interceptor
 * placed after it that replaces `metadata` with a copy hides them. Put jwtAuthInterceptor
 * last, or have later ones pass metadata on.
 *
 * @example
 * ```ts
 * // hidden: import type { Server, ServiceDefinition, ServerUnaryCall, sendUnaryData, ServerErrorResponse } from '@grpc/grpc-js';
 * // hidden: declare const server: Server;
 * // hidden: declare const Greeter: { service: ServiceDefinition };
 * server.addService(Greeter.service, {
 *   Hello(call: ServerUnaryCall<{ name: string }, unknown>, callback: sendUnaryData<{ message: string }>) {
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
  if (claims === undefined)
    throw unauthenticated(call, 'no verified token on this call (is jwtAuthInterceptor installed, and the method not public?)');
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

/**
 * UNAUTHENTICATED as the call's server understands it: a GrpcStatusError on
 * createJwtServer's transports (whose calls carry {@link CallMetadata}), else an error
 * grpc-js reads as a status (numeric `code`, `details`, `metadata`).
 */
function unauthenticated(call: CallWithMetadata, details: string): Error {
  if (call.metadata instanceof CallMetadata) return new GrpcStatusError(GrpcStatus.UNAUTHENTICATED, details);
  const metadata = new (grpcJs().Metadata)();
  const error: ServerErrorResponse & StatusObject = Object.assign(new Error(`UNAUTHENTICATED: ${details}`), {
    code: GrpcStatus.UNAUTHENTICATED,
    details,
    metadata,
  });
  return error;
}

/**
 * The DER of the client certificate TLS verified for a grpc-js call, or undefined.
 * `getAuthContext` came after grpc-js 1.10: without it no certificate can be read, so a
 * bound token is refused (fail closed), never let through.
 */
function peerCertificate(call: { getAuthContext?: () => { sslPeerCertificate?: { raw?: Buffer } } | undefined }): Buffer | undefined {
  return typeof call.getAuthContext === 'function' ? call.getAuthContext()?.sslPeerCertificate?.raw : undefined;
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
 * What {@link jwtAuthInterceptor} returns: a grpc-js server interceptor and a
 * createJwtServer interceptor at once, so one value protects either kind of server.
 *
 * @example
 * ```ts
 * // hidden: import { Server } from '@grpc/grpc-js';
 * // hidden: declare const verifier: RemoteVerifier;
 * // hidden: declare const keys: KeySet;
 * const auth: JwtAuthInterceptor = jwtAuthInterceptor(verifier);
 * const grpcServer = new Server({ interceptors: [auth] });
 * const jwtServer = createJwtServer({ keys, interceptors: [auth] });
 * ```
 */
export type JwtAuthInterceptor = GrpcServerInterceptor & Required<Pick<CallInterceptor, 'onCallStart' | 'onServe'>>;

/**
 * A server interceptor that lets a call reach its handler only with a valid
 * `authorization: Bearer <jwt>`, for a grpc-js server ([gRFC L112](https://github.com/grpc/proposal/blob/master/L112-node-server-interceptors.md):
 * `new Server({ interceptors: [...] })`) and for createJwtServer (`interceptors`) alike. Otherwise the
 * call ends UNAUTHENTICATED before the handler runs, its details saying why: `missing
 * token`, or the verifier's reason and message (`EXPIRED: token has expired (exp)`,
 * `AUDIENCE_MISMATCH: ...`). Handlers read the verified payload with {@link verifiedClaims}.
 * Methods in `publicMethods` (gRPC health by default) pass without a token.
 *
 * Every token's `aud` is checked: give `audience` here or to the verifier, or
 * {@link ANY_AUDIENCE} to accept any on purpose; leaving both out throws. Once `methods`
 * names a rule, a method without one is refused (`unlistedMethods`), and on createJwtServer
 * a rule or public method that names no served method stops `listen`.
 *
 * A certificate-bound token (`cnf` with `x5t#S256`, RFC 8705 section 3) passes only on a
 * connection whose verified client certificate has that thumbprint; on one without a
 * client certificate, or with another, the call ends UNAUTHENTICATED.
 *
 * `verifier` is {@link createRemoteVerifier}'s (keys from the issuer's GetJwks) or
 * {@link createVerifier}'s (keys in hand). A verifier that rejects with a
 * {@link GrpcStatusError} (a remote one that never reached its issuer: UNAVAILABLE) ends
 * the call with that status; any other failure ends it INTERNAL, without the cause. An
 * `authorize` hook alike (`authorization failed`). A status error of status OK counts as
 * any other failure. Every kind of server decides the same way.
 *
 * @example
 * ```ts
 * // hidden: import type { ChannelCredentials } from '@grpc/grpc-js';
 * // hidden: declare const tls: ChannelCredentials;
 * import { Server } from '@grpc/grpc-js';
 * import { createJwtClient, createRemoteVerifier, jwtAuthInterceptor } from 'jwt-grpc/client';
 *
 * const verifier = createRemoteVerifier(createJwtClient('jwt.internal:50051', { credentials: tls }), { audience: 'payments' });
 * const server = new Server({ interceptors: [jwtAuthInterceptor(verifier, { methods: { '/payments.Payments/Pay': { scopes: ['pay'] } } })] });
 * // or, on jwt-grpc's own server: createJwtServer({ keys, interceptors: [jwtAuthInterceptor(verifier)] })
 * ```
 */
export function jwtAuthInterceptor(verifier: TokenVerifier, options: JwtAuthInterceptorOptions = {}): JwtAuthInterceptor {
  const ServerInterceptingCall = requireServerInterceptors();
  const policy: CallPolicy = { authenticator: createAuthenticator(verifier, options), authorizer: createAuthorizer(options) };
  const onServe = servedMethodsCheck(options);
  const onCallStart = (call: CallContext): void | Promise<void> => onJwtServerCall(policy, call);
  const grpcJsInterceptor: GrpcServerInterceptor = (method, call) => {
    if (policy.authenticator.isPublic(method.path)) return new ServerInterceptingCall(call);
    const listener: ServerListener = {
      onReceiveMetadata: (metadata: GrpcMetadata, next) => onGrpcJsCall(policy, method.path, call, metadata, next),
    };
    return new ServerInterceptingCall(call, { start: (next) => next(listener) });
  };
  return Object.assign(grpcJsInterceptor, { onCallStart, onServe });
}

/** The rule paths and public methods, checked against the served methods where the server knows them (createJwtServer's listen). */
function servedMethodsCheck(options: JwtAuthInterceptorOptions): (served: ReadonlySet<string>) => void {
  const rulePaths = Object.keys(options.methods ?? {});
  const givenPublic = options.publicMethods ?? [];
  return (served) => {
    refuseUnservedPaths(rulePaths, served, (path) => `methods["${path}"]`);
    refuseUnservedPaths(givenPublic, served, () => 'publicMethods');
  };
}

/** On a traced createJwtServer: a jwt.verify span around authentication, the verifier run in its context. */
function traceOf(call: CallContext): DecisionTrace | undefined {
  const traced = startVerifySpan(call);
  if (traced === undefined) return undefined;
  return {
    run: (verify) => verifyIn(traced, verify),
    end: (outcome) => endVerifySpan(traced, 'claims' in outcome ? undefined : outcome.status),
  };
}

/** createJwtServer's adapter (either transport): the decision, its refusal thrown as the call's status. */
function onJwtServerCall(policy: CallPolicy, call: CallContext): void | Promise<void> {
  if (policy.authenticator.isPublic(call.method)) return;
  const metadata = call.metadata;
  const admit = (verdict: Verdict): void => {
    if (!('claims' in verdict)) throw refusalError(verdict);
    claimsByRequest.set(metadata, verdict.claims);
  };
  const tokens = metadata.getAll(policy.authenticator.metadataKey);
  const verdict = decide(policy, { tokens, thumbprint: () => call.caller?.thumbprint, call, trace: traceOf(call) });
  return 'then' in verdict ? verdict.then(admit) : admit(verdict);
}

/** A grpc-js Server's adapter: the decision, a refusal sent as the call's status, an admission passing the metadata on. */
function onGrpcJsCall(
  policy: CallPolicy,
  path: string,
  call: ServerInterceptingCallInterface,
  metadata: GrpcMetadata,
  next: (metadata: GrpcMetadata) => void,
): void {
  const settle = (verdict: Verdict): void => {
    if (!('claims' in verdict)) {
      call.sendStatus({ code: verdict.status, details: verdict.details, metadata: new (grpcJs().Metadata)() });
      return;
    }
    claimsByRequest.set(metadata, verdict.claims);
    next(metadata);
  };
  // grpc-js gives the peer certificate only once TLS verified it.
  const thumbprint = (): string | undefined => peerThumbprint(peerCertificate(call));
  const verdict = decide(policy, { tokens: metadata.get(policy.authenticator.metadataKey), thumbprint, call: { method: path, metadata } });
  if ('then' in verdict) void verdict.then(settle);
  else settle(verdict);
}
