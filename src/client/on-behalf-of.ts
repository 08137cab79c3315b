import type { CallCredentials } from '@grpc/grpc-js';
import { invalidOption } from '../base/errors.js';
import type { ExchangeTokenResponse } from '../jwt-service/messages.js';
import { grpcJs } from '../base/optional-deps.js';
import { CALL_CREDENTIALS_DEFAULTS, ON_BEHALF_OF_DEFAULTS } from './defaults.js';
import type { JwtClient } from './jwt-client.js';
import { integerOption, stringOption } from './options.js';
import { optionNames, refuseUnknownOptions } from '../base/known-options.js';
import { describeFailure, tokenFailure } from './token-source.js';

/**
 * What {@link onBehalfOf} needs of a {@link JwtClient}: any object with these two members does.
 *
 * @example
 * ```ts
 * // hidden: import type { ChannelCredentials } from '@grpc/grpc-js';
 * // hidden: declare const mtls: ChannelCredentials;
 * const issuer: TokenExchanger = createJwtClient('jwt.internal:50051', { credentials: mtls });
 * ```
 */
export type TokenExchanger = Pick<JwtClient, 'target' | 'exchangeToken'>;

/**
 * Options of {@link onBehalfOf}: the token asked for the callee, and how many are kept.
 *
 * @example
 * ```ts
 * const options: OnBehalfOfOptions = { audience: 'billing', scope: 'invoices:read', refreshBeforeSeconds: 30 };
 * ```
 */
export interface OnBehalfOfOptions {
  /** The callee: the `audience` of the exchange. This or `resource` is required. */
  readonly audience?: string;
  /** The callee as an absolute URI: the `resource` of the exchange. */
  readonly resource?: string;
  /** The scope asked for, space-delimited. Default: the caller's token's, as the issuer's policy allows. */
  readonly scope?: string;
  /** Exchange again this long before the token's `exp` (at the latest at half its lifetime). Default 60. */
  readonly refreshBeforeSeconds?: number;
  /** Exchanged tokens kept at once, one per caller token; the oldest goes first. Default 1000. */
  readonly maxEntries?: number;
}

const ON_BEHALF_OF_OPTION_NAMES = optionNames<OnBehalfOfOptions>({
  audience: true,
  resource: true,
  scope: true,
  refreshBeforeSeconds: true,
  maxEntries: true,
});

/** An exchanged token, kept until its refresh point. */
interface Exchanged {
  readonly jwt: string;
  readonly refreshAtMs: number;
}

const SUBJECT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';

/**
 * Call credentials on behalf of a caller, on grpc-js: the returned function takes the token a
 * handler was called with and gives credentials that send, as `authorization: Bearer`, the
 * token the issuer exchanged it for (ExchangeToken, RFC 8693, docs/token-exchange.md): scoped
 * to the callee, naming the caller as its subject and this service (the client certificate
 * of `issuer`'s channel) as the actor in `act`. Each exchanged token is kept until
 * `refreshBeforeSeconds` before its `exp`, one per caller token (at most `maxEntries`), and
 * concurrent calls for one caller share one exchange. When the issuer refuses, the call
 * fails PERMISSION_DENIED or UNAUTHENTICATED; when it cannot be reached, UNAVAILABLE, its
 * details naming the issuer.
 *
 * @example
 * ```ts
 * // hidden: import type { ChannelCredentials, Client } from '@grpc/grpc-js';
 * // hidden: declare const mtls: ChannelCredentials;
 * // hidden: declare const billing: Client & { charge(request: object, options: { credentials: CallCredentials }, callback: () => void): void };
 * // hidden: declare const callerToken: string; // from the handler's `authorization` metadata
 * // hidden: import type { CallCredentials } from '@grpc/grpc-js';
 * const asCaller = onBehalfOf(createJwtClient('jwt.internal:50051', { credentials: mtls }), { audience: 'billing' });
 * billing.charge({ cents: 100 }, { credentials: asCaller(callerToken) }, () => {}); // in the handler: one line
 * ```
 */
export function onBehalfOf(issuer: TokenExchanger, options: OnBehalfOfOptions): (callerToken: string) => CallCredentials {
  if (typeof issuer?.exchangeToken !== 'function') throw invalidOption('issuer', 'must be a JwtClient (createJwtClient)');
  refuseUnknownOptions(options, ON_BEHALF_OF_OPTION_NAMES, { owner: 'onBehalfOf' });
  const request = {
    subject_token_type: SUBJECT_TOKEN_TYPE,
    audience: stringOption('audience', options.audience) ?? '',
    resource: stringOption('resource', options.resource) ?? '',
    scope: stringOption('scope', options.scope) ?? '',
  };
  if (request.audience === '' && request.resource === '') throw invalidOption('audience', 'or resource is required: the service called');
  const refreshBeforeMs =
    1000 * integerOption('refreshBeforeSeconds', options.refreshBeforeSeconds, CALL_CREDENTIALS_DEFAULTS.refreshBeforeSeconds, 0, 86_400);
  const maxEntries = integerOption('maxEntries', options.maxEntries, ON_BEHALF_OF_DEFAULTS.maxEntries, 1, 1_000_000);
  const held = new Map<string, Exchanged>();
  const inFlight = new Map<string, Promise<string>>();

  const keep = (callerToken: string, answer: ExchangeTokenResponse): string => {
    const now = Date.now();
    const lifeMs = answer.expires_in * 1000;
    // A short-lived token would otherwise be exchanged again on every call.
    held.delete(callerToken);
    if (held.size >= maxEntries) held.delete(held.keys().next().value as string);
    held.set(callerToken, { jwt: answer.access_token, refreshAtMs: now + Math.max(lifeMs / 2, lifeMs - refreshBeforeMs) });
    return answer.access_token;
  };
  const exchange = (callerToken: string): Promise<string> => {
    const current = held.get(callerToken);
    if (current !== undefined && Date.now() < current.refreshAtMs) return Promise.resolve(current.jwt);
    let pending = inFlight.get(callerToken);
    if (pending === undefined) {
      pending = issuer
        .exchangeToken({ ...request, subject_token: callerToken })
        .then((answer) => keep(callerToken, answer))
        .catch((err: unknown) => {
          throw tokenFailure(`cannot exchange the caller's token at issuer ${issuer.target}: ${describeFailure(err)}`, err);
        })
        .finally(() => inFlight.delete(callerToken));
      inFlight.set(callerToken, pending);
    }
    return pending;
  };
  return (callerToken) => {
    if (typeof callerToken !== 'string' || callerToken.length === 0)
      throw invalidOption('callerToken', 'must be the token the handler was called with');
    const { CallCredentials, Metadata } = grpcJs();
    return CallCredentials.createFromMetadataGenerator((_call, callback) => {
      exchange(callerToken).then(
        (jwt) => {
          const metadata = new Metadata();
          metadata.set('authorization', `Bearer ${jwt}`);
          callback(null, metadata);
        },
        (err: Error) => callback(err),
      );
    });
  };
}
