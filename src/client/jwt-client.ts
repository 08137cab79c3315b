import type { Buffer } from 'node:buffer';
import type { CallCredentials, ChannelCredentials, ChannelOptions, Client, ServiceError } from '@grpc/grpc-js';
import { invalidOption } from '../base/errors.js';
import { grpcJs } from '../base/optional-deps.js';
import type {
  ExchangeTokenRequest,
  ExchangeTokenResponse,
  GenerateJwtRequest,
  GenerateJwtResponse,
  GetJwksRequest,
  GetJwksResponse,
  GetStatusListRequest,
  GetStatusListResponse,
  RevokeJwtRequest,
  RevokeJwtResponse,
  VerifyJwtRequest,
  VerifyJwtResponse,
} from '../jwt-service/messages.js';
import { GrpcStatusError, type CallMetadata, GrpcStatus } from '../contracts/handler-api.js';
import { CLIENT_DEFAULTS } from './defaults.js';
import { integerOption } from './options.js';
import { optionNames, refuseUnknownOptions } from '../base/known-options.js';
import { type ClientMethod, jwtServiceMethods } from './proto.js';
import { toGrpcMetadata, toGrpcStatusError } from './status.js';
import { endClientSpan, startClientSpan } from '../tracing/client.js';

/** Longest deadline accepted, in ms: a day. Longer is a mistake, not a deadline. */
const MAX_DEADLINE_MS = 86_400_000;

/**
 * Options of {@link createJwtClient}; validated once, when the client is made.
 *
 * @example
 * ```ts
 * // hidden: import { credentials } from '@grpc/grpc-js';
 * // hidden: declare const caPem: Buffer;
 * const options: JwtClientOptions = { credentials: credentials.createSsl(caPem), loadBalancing: 'round_robin', deadlineMs: 2000 };
 * ```
 */
export interface JwtClientOptions {
  /** Channel credentials: `credentials.createSsl(ca)` for TLS. Default: plaintext. */
  readonly credentials?: ChannelCredentials;
  /**
   * How calls spread over the addresses the target resolves to: `pick_first` (grpc-js's
   * default: one connection) or `round_robin` (one connection per address, calls in turn).
   * Sets the channel's service config; do not also give `grpc.service_config`.
   */
  readonly loadBalancing?: 'pick_first' | 'round_robin';
  /** Extra grpc-js channel options; they override jwt-grpc's own. */
  readonly channelOptions?: ChannelOptions;
  /** Deadline of each call unless the call gives its own, in ms. Default 10000. */
  readonly deadlineMs?: number;
}

/** The names {@link JwtClientOptions} holds; an object with another is refused. */
const CLIENT_OPTION_NAMES = optionNames<JwtClientOptions>({
  credentials: true,
  loadBalancing: true,
  channelOptions: true,
  deadlineMs: true,
});

/**
 * Per-call options of a {@link JwtClient} method.
 *
 * @example
 * ```ts
 * // hidden: declare const jwt: JwtClient;
 * // hidden: declare const token: string;
 * // hidden: declare const requestId: string;
 * const metadata = new CallMetadata().set('x-request-id', requestId);
 * await jwt.verifyJwt({ jwt: token }, { deadlineMs: 200, metadata, signal: AbortSignal.timeout(1000) });
 * ```
 */
export interface JwtCallOptions {
  /** This call's deadline, in ms from now. Default: the client's `deadlineMs`. */
  readonly deadlineMs?: number;
  /** Custom metadata sent with the call. */
  readonly metadata?: CallMetadata;
  /** Aborting cancels the call; it then rejects with CANCELLED. */
  readonly signal?: AbortSignal;
  /** Call credentials for this call only (they need a TLS channel). */
  readonly credentials?: CallCredentials;
}

/**
 * A typed client of `jwt.services.JwtService`. Each method resolves to the response or
 * rejects with a {@link GrpcStatusError} carrying the gRPC status, details and trailers.
 * Request fields left out take their proto3 defaults (`''`, `0`); a field of the wrong type
 * (`ttl_seconds: '60'`) rejects with INVALID_ARGUMENT naming it, before anything is sent.
 *
 * @example
 * ```ts
 * // hidden: declare const jwt: JwtClient;
 * // hidden: declare function retryLater(): void;
 * try {
 *   await jwt.generateJwt({ algorithm: 'ES256', subject: 'svc-orders' });
 * } catch (err) {
 *   if (err instanceof GrpcStatusError && err.status === GrpcStatus.UNAVAILABLE) retryLater();
 * }
 * ```
 */
export interface JwtClient extends Disposable, AsyncDisposable {
  /** The target as given, e.g. `dns:///jwt.internal:50051`; names the issuer in messages. */
  readonly target: string;
  generateJwt(request: Partial<GenerateJwtRequest>, options?: JwtCallOptions): Promise<GenerateJwtResponse>;
  verifyJwt(request: Partial<VerifyJwtRequest>, options?: JwtCallOptions): Promise<VerifyJwtResponse>;
  getJwks(request?: GetJwksRequest, options?: JwtCallOptions): Promise<GetJwksResponse>;
  /** The signed Token Status List of a server with `statusList` (docs/status-list.md); `uri` empty or omitted: its own. */
  getStatusList(request?: Partial<GetStatusListRequest>, options?: JwtCallOptions): Promise<GetStatusListResponse>;
  /**
   * Revokes a token (by `jwt`, or by `jti` and `expires_at`) until it expires. The server
   * wants its admin credential: `authorization: Bearer SECRET` in `options.metadata`, or a
   * client certificate its policy lists under `revokers` (docs/revocation.md).
   */
  revokeJwt(request: Partial<RevokeJwtRequest>, options?: JwtCallOptions): Promise<RevokeJwtResponse>;
  /**
   * Token exchange (RFC 8693, docs/token-exchange.md): trades `subject_token` for a token of
   * this issuer for `audience` (or `resource`), never wider than it; the client certificate
   * of the channel, or `actor_token`, is the actor named in its `act` claim.
   */
  exchangeToken(request: Partial<ExchangeTokenRequest>, options?: JwtCallOptions): Promise<ExchangeTokenResponse>;
  /** Closes the channel; later calls reject with CANCELLED. Idempotent. */
  close(): void;
}

function channelOptions(options: JwtClientOptions): ChannelOptions {
  const { loadBalancing } = options;
  if (loadBalancing !== undefined && loadBalancing !== 'pick_first' && loadBalancing !== 'round_robin') {
    throw invalidOption('loadBalancing', `must be "pick_first" or "round_robin", got ${JSON.stringify(loadBalancing)}`);
  }
  if (loadBalancing !== undefined && options.channelOptions?.['grpc.service_config'] !== undefined) {
    throw invalidOption('loadBalancing', 'give loadBalancing or channelOptions["grpc.service_config"], not both');
  }
  return {
    // Channelz keeps per-call statistics nobody reads unless a channelz service is
    // installed; off, it stops costing a share of every small unary call.
    'grpc.enable_channelz': 0,
    ...(loadBalancing !== undefined && { 'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ [loadBalancing]: {} }] }) }),
    ...options.channelOptions,
  };
}

function makeClient(target: unknown, options: JwtClientOptions): Client {
  if (typeof target !== 'string' || target.length === 0)
    throw invalidOption('target', `must be a non-empty string, got ${JSON.stringify(target)}`);
  // grpc-js loads with the first client, not with the package: importing jwt-grpc loads none of it.
  const { ChannelCredentials, Client, credentials: grpcCredentials } = grpcJs();
  const channelCredentials = options.credentials ?? grpcCredentials.createInsecure();
  if (!(channelCredentials instanceof ChannelCredentials)) throw invalidOption('credentials', 'must be grpc-js ChannelCredentials');
  const resolvedOptions = channelOptions(options);
  try {
    return new Client(target, channelCredentials, resolvedOptions);
  } catch (err) {
    throw invalidOption('target', `${JSON.stringify(target)}: ${(err as Error).message}`);
  }
}

/** The serializer of a request {@link createJwtClient} has encoded already. */
const asEncoded = (bytes: Buffer): Buffer => bytes;

/**
 * Creates a client of JwtService on @grpc/grpc-js. `target` takes every grpc-js target
 * form: `host:port`, `dns:///name:port` (every address the name resolves to), `ipv4:a:p,b:q`,
 * `unix:/path`. With `loadBalancing: 'round_robin'` calls spread over all of them, e.g. the
 * replicas behind a headless Kubernetes service. Options are validated now; an invalid one
 * throws `JwtGrpcError` (`ERR_INVALID_OPTION`) naming it.
 *
 * @example
 * ```ts
 * // hidden: declare const caPem: Buffer;
 * import { credentials } from '@grpc/grpc-js';
 * import { createJwtClient } from 'jwt-grpc/client';
 *
 * using jwt = createJwtClient('dns:///jwt.internal:50051', {
 *   credentials: credentials.createSsl(caPem),
 *   loadBalancing: 'round_robin',
 * });
 * const { jwt: token, expires_at } = await jwt.generateJwt({ algorithm: 'ES256', subject: 'svc-orders' });
 * const verdict = await jwt.verifyJwt({ jwt: token }, { deadlineMs: 500 });
 * ```
 */
export function createJwtClient(target: string, options: JwtClientOptions = {}): JwtClient {
  refuseUnknownOptions(options, CLIENT_OPTION_NAMES, { owner: 'createJwtClient' });
  const defaultDeadlineMs = integerOption('deadlineMs', options.deadlineMs, CLIENT_DEFAULTS.deadlineMs, 1, MAX_DEADLINE_MS);
  const client = makeClient(target, options);
  const methods = jwtServiceMethods();
  let closed = false;

  function unary<Req, Res>(method: ClientMethod<Req, Res>, request: Req, callOptions: JwtCallOptions | undefined): Promise<Res> {
    if (closed) return Promise.reject(new GrpcStatusError(GrpcStatus.CANCELLED, `client of ${target} is closed`));
    const signal = callOptions?.signal;
    if (signal?.aborted === true)
      return Promise.reject(new GrpcStatusError(GrpcStatus.CANCELLED, 'call aborted before it started', { cause: signal.reason }));
    const deadlineMs =
      callOptions?.deadlineMs === undefined
        ? defaultDeadlineMs
        : integerOption('deadlineMs', callOptions.deadlineMs, 0, 1, MAX_DEADLINE_MS);
    let bytes: Buffer;
    try {
      // Encoded here rather than by grpc-js, which would end the call INTERNAL ("Request message
      // serialization failure"): a field of the wrong type is the caller's INVALID_ARGUMENT.
      bytes = method.serialize(request);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return new Promise<Res>((resolve, reject) => {
      const onAbort = (): void => call.cancel();
      const metadata = toGrpcMetadata(callOptions?.metadata);
      const span = startClientSpan(method.path, metadata);
      const call = client.makeUnaryRequest(
        method.path,
        asEncoded,
        method.deserialize,
        bytes,
        metadata,
        { deadline: Date.now() + deadlineMs, ...(callOptions?.credentials !== undefined && { credentials: callOptions.credentials }) },
        (err: ServiceError | null, response?: Res) => {
          signal?.removeEventListener('abort', onAbort);
          endClientSpan(span, err === null ? 0 : err.code, err === null ? '' : err.details);
          if (err !== null) reject(toGrpcStatusError(err));
          else resolve(response as Res);
        },
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  function close(): void {
    if (closed) return;
    closed = true;
    client.close();
  }

  return {
    target,
    generateJwt: (request, callOptions) => unary(methods.GenerateJwt, request, callOptions),
    verifyJwt: (request, callOptions) => unary(methods.VerifyJwt, request, callOptions),
    getJwks: (request = {}, callOptions) => unary(methods.GetJwks, request, callOptions),
    getStatusList: (request = {}, callOptions) => unary(methods.GetStatusList, request, callOptions),
    revokeJwt: (request, callOptions) => unary(methods.RevokeJwt, request, callOptions),
    exchangeToken: (request, callOptions) => unary(methods.ExchangeToken, request, callOptions),
    close,
    [Symbol.dispose]: close,
    [Symbol.asyncDispose]: async () => close(),
  };
}
