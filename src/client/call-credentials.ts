import type { CallCredentials } from '@grpc/grpc-js';
import { grpcJs } from '../base/optional-deps.js';
import { type JwtCallCredentialsOptions, type TokenIssuer, createTokenSource } from './token-source.js';

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
 * grpc-js sends call credentials only over secure channels: combine them with TLS channel
 * credentials (`credentials.combineChannelCredentials`), or pass them per call.
 *
 * @example
 * ```ts
 * // hidden: declare const caPem: Buffer;
 * // hidden: import type { Client, ChannelCredentials } from '@grpc/grpc-js';
 * // hidden: declare const PaymentsClient: new (target: string, credentials: ChannelCredentials) => Client;
 * import { credentials } from '@grpc/grpc-js';
 * import { createJwtClient, jwtCallCredentials } from 'jwt-grpc/client';
 *
 * const tls = credentials.createSsl(caPem);
 * const issuer = createJwtClient('jwt.internal:50051', { credentials: tls });
 * const auth = jwtCallCredentials(issuer, { algorithm: 'ES256', subject: 'svc-orders', audience: 'payments' });
 * const payments = new PaymentsClient('payments.internal:443', credentials.combineChannelCredentials(tls, auth));
 * ```
 */
export function jwtCallCredentials(client: TokenIssuer, options: JwtCallCredentialsOptions): CallCredentials {
  const source = createTokenSource(client, options);
  const { CallCredentials, Metadata } = grpcJs();
  return CallCredentials.createFromMetadataGenerator((_call, callback) => {
    source.token().then(
      (jwt) => {
        const metadata = new Metadata();
        metadata.set('authorization', `Bearer ${jwt}`);
        callback(null, metadata);
      },
      (err: Error) => callback(err),
    );
  });
}
