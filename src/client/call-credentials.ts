import type { CallCredentials, Interceptor } from '@grpc/grpc-js';
import { grpcJs } from '../base/optional-deps.js';
import { GrpcStatus } from '../contracts/handler-api.js';
import { type JwtCallCredentialsOptions, type TokenIssuer, type TokenSource, createTokenSource } from './token-source.js';

/**
 * What {@link jwtCallCredentials} returns: grpc-js call credentials, with a way to drop
 * the token they hold when a service refuses it.
 *
 * @example
 * ```ts
 * // hidden: declare const auth: JwtCallCredentials;
 * auth.invalidate(); // e.g. after a key compromise: the next call fetches a new token
 * ```
 */
export interface JwtCallCredentials extends CallCredentials {
  /**
   * Drops the token held, so that the next call fetches a new one. At most once a second
   * (a service that refuses every token does not turn each call into a GenerateJwt).
   */
  invalidate(): void;
  /**
   * A grpc-js client interceptor that calls {@link JwtCallCredentials.invalidate} when a
   * call ends UNAUTHENTICATED: a token the service refuses (revoked, its key withdrawn) is
   * dropped at once, not sent until its scheduled refresh, and the next call carries a
   * fresh one. The refused call is not repeated: once per call, never a loop. Give it to
   * the client that uses these credentials (`interceptors: [auth.interceptor]`).
   */
  readonly interceptor: Interceptor;
}

/**
 * grpc-js call credentials that put `authorization: Bearer <jwt>` on every call, with a
 * token from the issuer `client` talks to. One token is kept and sent until
 * `refreshBeforeSeconds` before its `exp` (or half its lifetime, whichever comes later);
 * from then on it is still sent while one background fetch replaces it. However many calls
 * wait for a token, one GenerateJwt is in flight. When no valid token can be had, the call
 * fails, its details naming the issuer: with UNAVAILABLE (retryable) when the issuer cannot
 * be reached or fails, with UNAUTHENTICATED when it refuses the request (e.g. an algorithm
 * it does not have), or PERMISSION_DENIED when it answers so: asking again cannot help.
 *
 * A token the service refuses (UNAUTHENTICATED: revoked, its key withdrawn) is dropped by
 * the credentials' `interceptor`, or by `invalidate()`, so that the next call fetches a new
 * one instead of sending it until its refresh point (up to its whole lifetime).
 *
 * grpc-js sends call credentials only over secure channels: combine them with TLS channel
 * credentials (`credentials.combineChannelCredentials`), or pass them per call.
 *
 * @example
 * ```ts
 * // hidden: declare const caPem: Buffer;
 * // hidden: import type { Client, ChannelCredentials, ClientOptions } from '@grpc/grpc-js';
 * // hidden: declare const PaymentsClient: new (target: string, credentials: ChannelCredentials, options?: ClientOptions) => Client;
 * import { credentials } from '@grpc/grpc-js';
 * import { createJwtClient, jwtCallCredentials } from 'jwt-grpc/client';
 *
 * const tls = credentials.createSsl(caPem);
 * const issuer = createJwtClient('jwt.internal:50051', { credentials: tls });
 * const auth = jwtCallCredentials(issuer, { algorithm: 'ES256', subject: 'svc-orders', audience: 'payments' });
 * const payments = new PaymentsClient('payments.internal:443', credentials.combineChannelCredentials(tls, auth), {
 *   interceptors: [auth.interceptor], // a token the service refuses is dropped: the next call gets a fresh one
 * });
 * ```
 */
export function jwtCallCredentials(client: TokenIssuer, options: JwtCallCredentialsOptions): JwtCallCredentials {
  const source = createTokenSource(client, options);
  const { CallCredentials, Metadata } = grpcJs();
  const credentials = CallCredentials.createFromMetadataGenerator((_call, callback) => {
    source.token().then(
      (jwt) => {
        const metadata = new Metadata();
        metadata.set('authorization', `Bearer ${jwt}`);
        callback(null, metadata);
      },
      (err: Error) => callback(err),
    );
  });
  return Object.assign(credentials, { invalidate: () => source.invalidate(), interceptor: invalidatingInterceptor(source) });
}

/** A client interceptor that drops `source`'s token when a call ends UNAUTHENTICATED. */
function invalidatingInterceptor(source: TokenSource): Interceptor {
  const { InterceptingCall } = grpcJs();
  return (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      start(metadata, _listener, next) {
        // A partial listener: grpc-js passes on what it leaves out.
        next(metadata, {
          onReceiveStatus(status, nextStatus) {
            if (status.code === GrpcStatus.UNAUTHENTICATED) source.invalidate();
            nextStatus(status);
          },
        });
      },
    });
}
