import { type Span, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { JwtGrpcError } from '../errors.js';
import { recordingServerContext } from '../tracing/interceptor.js';
import type { CallContext, ServedService } from '../transport/handler-api.js';
import { GrpcStatusError, GrpcStatus, type UnaryHandler } from '../transport/handler-api.js';
import type { JwtServiceCore } from './core.js';
import { SERVICE_NAME, jwtServiceDefinition } from './definition.js';
import type { GenerateJwtRequest, GetStatusListRequest, RevokeJwtRequest, VerifyJwtRequest } from './messages.js';

/**
 * A unary handler around a synchronous function: the call's work is all CPU. A bad
 * request field (`ERR_INVALID_REQUEST`) is INVALID_ARGUMENT with its message; anything
 * else propagates, and the transport answers INTERNAL without internals and logs it.
 */
function unary<Req, Res>(run: (request: Req, call: CallContext) => Res | Promise<Res>): UnaryHandler<Req, Res> {
  return (request, call) => {
    try {
      const result = run(request, call);
      // GenerateJwt with a key held by an HSM or KMS: its refusals arrive later, mapped the same way.
      return result instanceof Promise ? result.catch(asStatus) : result;
    } catch (err) {
      return asStatus(err);
    }
  };
}

/** A bad request field (`ERR_INVALID_REQUEST`) as INVALID_ARGUMENT; anything else as it is. */
function asStatus(err: unknown): never {
  if (err instanceof JwtGrpcError && err.code === 'ERR_INVALID_REQUEST') throw new GrpcStatusError(GrpcStatus.INVALID_ARGUMENT, err.message);
  throw err;
}

/**
 * A unary handler whose work is a child span `name` of the call's server span (set by the
 * tracing interceptor): `run` records what it may on the span, a failure marks it ERROR.
 * A call whose server span does not record (not sampled) gets no child: `run` has no span.
 */
function traced<Req, Res>(tracer: Tracer, name: string, run: (request: Req, span: Span | undefined, call: CallContext) => Res | Promise<Res>): UnaryHandler<Req, Res> {
  return unary<Req, Res>((request, call) => {
    const parent = recordingServerContext(call);
    if (parent === undefined) return run(request, undefined, call);
    const span = tracer.startSpan(name, undefined, parent);
    const failed = (err: unknown): never => {
      // The code only: a message may quote the request (a subject, a claim), which spans never carry.
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof JwtGrpcError ? err.code : err instanceof GrpcStatusError ? `grpc ${err.status}` : 'internal error' });
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
 * (`jwt.sign`, `jwt.verify`); without one the handlers do no tracing work. @internal
 */
export function jwtService(core: JwtServiceCore, tracer?: Tracer): ServedService {
  return {
    name: SERVICE_NAME,
    definition: jwtServiceDefinition(),
    implementation: {
      GenerateJwt:
        tracer === undefined
          ? unary((request: GenerateJwtRequest, call) => core.generate(request, call))
          : traced(tracer, 'jwt.sign', (request: GenerateJwtRequest, span, call) => core.generate(request, call, span)),
      VerifyJwt: tracer === undefined ? unary((request: VerifyJwtRequest) => core.verify(request)) : traced(tracer, 'jwt.verify', core.verify.bind(core)),
      GetJwks: unary(() => core.jwks()),
      GetStatusList: unary((request: GetStatusListRequest) => core.statusListToken(request)),
      // Asynchronous (the store makes it durable first); its refusals are GrpcStatusErrors already.
      RevokeJwt: (request: RevokeJwtRequest, call: CallContext) => core.revoke(request, call),
    },
  };
}
