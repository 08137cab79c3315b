import { JwtGrpcError } from '../errors.js';
import type { ServedService } from '../transport/handler-api.js';
import { type CallContext, GrpcStatusError, GrpcStatus, type UnaryHandler } from '../transport/handler-api.js';
import type { JwtServiceCore } from './core.js';
import { SERVICE_NAME, jwtServiceDefinition } from './definition.js';
import type { VerifyJwtRequest } from './messages.js';

/**
 * A unary handler around a synchronous function: the call's work is all CPU. A bad
 * request field (`ERR_INVALID_REQUEST`) is INVALID_ARGUMENT with its message; anything
 * else propagates, and the transport answers INTERNAL without internals and logs it.
 */
function unary<Req, Res>(run: (request: Req, call: CallContext) => Res): UnaryHandler<Req, Res> {
  return (request, call) => {
    try {
      return run(request, call);
    } catch (err) {
      if (err instanceof JwtGrpcError && err.code === 'ERR_INVALID_REQUEST') throw new GrpcStatusError(GrpcStatus.INVALID_ARGUMENT, err.message);
      throw err;
    }
  };
}

/**
 * JwtService over a {@link JwtServiceCore}, as either transport serves it: the handlers
 * are plain functions in one object. @internal
 */
export function jwtService(core: JwtServiceCore): ServedService {
  return {
    name: SERVICE_NAME,
    definition: jwtServiceDefinition(),
    implementation: {
      GenerateJwt: unary(core.generate.bind(core)),
      VerifyJwt: unary((request: VerifyJwtRequest) => core.verify(request)),
      GetJwks: unary(() => core.jwks()),
    },
  };
}
