import { type UntypedServiceImplementation, type handleUnaryCall, type ServiceError, Metadata, status } from '@grpc/grpc-js';
import { JwtGrpcError } from '../errors.js';
import type { Logger } from '../log.js';
import { MalformedRequest } from './codec/decode.js';
import type { JwtServiceCore } from './core.js';

function toServiceError(err: unknown, method: string, logger: Logger): Partial<ServiceError> {
  if (err instanceof JwtGrpcError && err.code === 'ERR_INVALID_REQUEST') {
    return { code: status.INVALID_ARGUMENT, details: err.message, metadata: new Metadata() };
  }
  // Unexpected: log the cause here, answer without internals.
  logger.error(`${method} failed`, { error: err instanceof Error ? err.message : String(err) });
  return { code: status.INTERNAL, details: `${method}: internal error`, metadata: new Metadata() };
}

/**
 * A plain unary handler around a synchronous function: the call's work is all CPU. A
 * request that did not decode (codec/decode.ts) is INVALID_ARGUMENT naming the problem.
 */
function unary<Req, Res>(method: string, logger: Logger, run: (request: Req) => Res): handleUnaryCall<Req | MalformedRequest, Res> {
  return (call, callback) => {
    const request = call.request;
    if (request instanceof MalformedRequest) {
      callback({ code: status.INVALID_ARGUMENT, details: request.message, metadata: new Metadata() });
      return;
    }
    let response: Res;
    try {
      response = run(request);
    } catch (err) {
      callback(toServiceError(err, method, logger));
      return;
    }
    callback(null, response);
  };
}

/** The grpc-js implementation of JwtService over a {@link JwtServiceCore}. @internal */
export function jwtServiceHandlers(core: JwtServiceCore, logger: Logger): UntypedServiceImplementation {
  return {
    GenerateJwt: unary('GenerateJwt', logger, core.generate.bind(core)),
    VerifyJwt: unary('VerifyJwt', logger, core.verify.bind(core)),
    GetJwks: unary('GetJwks', logger, () => core.jwks()),
  };
}
