import { type Span, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { JwtGrpcError, type JwtGrpcErrorCode } from '../base/errors.js';
import { KEY_BACKEND_UNAVAILABLE_MESSAGE } from '../keys/backend.js';
import { recordingServerContext } from '../tracing/server-context.js';
import type { CallContext, ServedService, StatusCode } from '../contracts/handler-api.js';
import { GrpcStatusError, GrpcStatus, type UnaryHandler } from '../contracts/handler-api.js';
import type { JwtServiceCore } from './core.js';
import { SERVICE_NAME, jwtServiceDefinition } from './definition.js';
import type { ExchangeTokenRequest, GenerateJwtRequest, GetStatusListRequest, RevokeJwtRequest, VerifyJwtRequest } from './messages.js';

/**
 * The one edge between JwtService's logic and gRPC: the status each code of the errors the
 * core throws is answered with, with the error's message. INTERNAL ones are rethrown as they
 * are: the transport answers INTERNAL without internals and logs the message. Any other
 * error (a bug) also ends as INTERNAL, logged.
 */
export const SERVICE_ERROR_STATUS = {
  ERR_INVALID_REQUEST: GrpcStatus.INVALID_ARGUMENT,
  ERR_PERMISSION_DENIED: GrpcStatus.PERMISSION_DENIED,
  ERR_UNAUTHENTICATED: GrpcStatus.UNAUTHENTICATED,
  ERR_RATE_LIMITED: GrpcStatus.RESOURCE_EXHAUSTED,
  ERR_KEY_BACKEND_UNAVAILABLE: GrpcStatus.UNAVAILABLE,
  ERR_STATUS_LIST_FULL: GrpcStatus.UNAVAILABLE,
  ERR_REVOCATION_STORE_UNAVAILABLE: GrpcStatus.UNAVAILABLE,
  ERR_NO_STATUS_LIST: GrpcStatus.FAILED_PRECONDITION,
  ERR_NO_TOKEN_EXCHANGE: GrpcStatus.FAILED_PRECONDITION,
  ERR_UNKNOWN_STATUS_LIST: GrpcStatus.NOT_FOUND,
  ERR_SELF_CHECK_FAILED: GrpcStatus.INTERNAL,
} as const satisfies Partial<Record<JwtGrpcErrorCode, StatusCode>>;

/** The codes of the errors JwtService's core throws: the keys of {@link SERVICE_ERROR_STATUS}. @internal */
export type ServiceErrorCode = keyof typeof SERVICE_ERROR_STATUS;

/** The status `err` is answered with: its code's in the table, a GrpcStatusError's own; undefined for anything else (INTERNAL). @internal */
export function statusOf(err: unknown): StatusCode | undefined {
  if (err instanceof GrpcStatusError) return err.status;
  if (err instanceof JwtGrpcError && Object.hasOwn(SERVICE_ERROR_STATUS, err.code))
    return SERVICE_ERROR_STATUS[err.code as ServiceErrorCode];
  return undefined;
}

/**
 * What the caller is told of `err`: its message, unless it is answered INTERNAL (undefined:
 * the transport's own words), or a key backend failed: then {@link KEY_BACKEND_UNAVAILABLE_MESSAGE}
 * only, as the backend's own words (account, role, instance, key ARN) are for the log. @internal
 */
export function callerMessage(err: unknown): string | undefined {
  const status = statusOf(err);
  if (status === undefined || status === GrpcStatus.INTERNAL) return undefined;
  if (err instanceof GrpcStatusError) return err.details;
  return (err as JwtGrpcError).code === 'ERR_KEY_BACKEND_UNAVAILABLE' ? KEY_BACKEND_UNAVAILABLE_MESSAGE : (err as Error).message;
}

/** `err` as the transport answers it: a core error as the status of its code, with {@link callerMessage}; anything else as it is. @internal */
export function asStatus(err: unknown): never {
  if (err instanceof GrpcStatusError || !(err instanceof JwtGrpcError)) throw err;
  const status = statusOf(err);
  if (status === undefined || status === GrpcStatus.INTERNAL) throw err;
  throw new GrpcStatusError(status, callerMessage(err) as string);
}

/**
 * A unary handler around the core: a refusal, now or (with a key held by an HSM or a KMS,
 * or RevokeJwt's store) later, is mapped by {@link asStatus}.
 */
function unary<Req, Res>(run: (request: Req, call: CallContext) => Res | Promise<Res>): UnaryHandler<Req, Res> {
  return (request, call) => {
    try {
      const result = run(request, call);
      return result instanceof Promise ? result.catch(asStatus) : result;
    } catch (err) {
      return asStatus(err);
    }
  };
}

/**
 * A unary handler whose work is a child span `name` of the call's server span (set by the
 * tracing interceptor): `run` records what it may on the span, a failure marks it ERROR.
 * A call whose server span does not record (not sampled) gets no child: `run` has no span.
 */
function traced<Req, Res>(
  tracer: Tracer,
  name: string,
  run: (request: Req, span: Span | undefined, call: CallContext) => Res | Promise<Res>,
): UnaryHandler<Req, Res> {
  return unary<Req, Res>((request, call) => {
    const parent = recordingServerContext(call);
    if (parent === undefined) return run(request, undefined, call);
    const span = tracer.startSpan(name, undefined, parent);
    const failed = (err: unknown): never => {
      // The code only: a message may quote the request (a subject, a claim), which spans never carry.
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof JwtGrpcError ? err.code : 'internal error' });
      throw err;
    };
    let result: Res | Promise<Res>;
    try {
      result = run(request, span, call);
    } catch (err) {
      try {
        return failed(err);
      } finally {
        span.end();
      }
    }
    // A key held by an HSM or KMS: the span ends when the backend has answered.
    if (result instanceof Promise) return result.catch(failed).finally(() => span.end());
    span.end();
    return result;
  });
}

/**
 * JwtService over a {@link JwtServiceCore}, as either transport serves it: the handlers
 * are plain functions in one object. With a `tracer`, signing and verifying are spans
 * (`jwt.sign`, `jwt.verify`) handed to the core as the call's scope, for its span
 * observer; without one the handlers do no tracing work. @internal
 */
export function jwtService(core: JwtServiceCore<Span>, tracer?: Tracer): ServedService {
  return {
    name: SERVICE_NAME,
    definition: jwtServiceDefinition(),
    implementation: {
      GenerateJwt:
        tracer === undefined
          ? unary((request: GenerateJwtRequest, call) => core.generate(request, call))
          : traced(tracer, 'jwt.sign', (request: GenerateJwtRequest, span, call) => core.generate(request, call, span)),
      VerifyJwt:
        tracer === undefined
          ? unary((request: VerifyJwtRequest) => core.verify(request))
          : traced(tracer, 'jwt.verify', (request: VerifyJwtRequest, span) => core.verify(request, span)),
      GetJwks: unary(() => core.jwks()),
      GetStatusList: unary((request: GetStatusListRequest) => core.statusListToken(request)),
      // Asynchronous (the store makes it durable first): its refusals are mapped when it settles.
      RevokeJwt: unary((request: RevokeJwtRequest, call) => core.revoke(request, call)),
      // Asynchronous (an external issuer's keys may be fetched first): mapped when it settles.
      ExchangeToken: unary((request: ExchangeTokenRequest, call) => core.exchange(request, call)),
    },
  };
}
