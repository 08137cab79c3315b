/**
 * The shipped protos in proto/ that src/ loads (health, reflection; JwtService's codecs
 * are its own, src/jwt-service/codec/), loaded with @grpc/proto-loader into the handler
 * API of src/contracts/handler-api.ts. The loader (and protobufjs) load on the first
 * codec call, not at import or at start: see {@link lazyProtoService}.
 */
import type { Buffer } from 'node:buffer';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../base/package-root.js';
import { protoLoader } from '../base/optional-deps.js';
import { GrpcStatusError, type MethodDescriptor, type ServiceDescriptor, GrpcStatus } from '../contracts/handler-api.js';
import { internalError } from '../base/assert.js';

/**
 * keepCase: field names as in the proto (ttl_seconds), so the code reads like the
 * contract. longs: Number, since ttl_seconds and expires_at are seconds far below 2^53
 * and an out-of-range int64 still comes out as a huge number that the bounds refuse.
 * defaults: absent fields read as '' / 0, as proto3 means them.
 */
export const PROTO_LOADER_OPTIONS = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true } as const;

/** The folder of the shipped .proto files; imports resolve from it (`grpc/health/v1/health.proto`). */
export const PROTO_DIR = join(PACKAGE_ROOT, 'proto');

/**
 * The methods of `service` in `file` (relative to proto/), with proto-loader's codecs
 * under the service's loader options (field names as in the proto, enums as names,
 * defaults filled in). A request that is not valid protobuf for its message throws
 * INVALID_ARGUMENT naming the message, where proto-loader's own error would answer INTERNAL.
 */
export function loadProtoService(file: string, service: string): ServiceDescriptor {
  const packageDefinition = protoLoader().loadSync(file, { ...PROTO_LOADER_OPTIONS, includeDirs: [PROTO_DIR] });
  const methods = packageDefinition[service] as Record<string, MethodDescriptor<unknown, unknown>> | undefined;
  if (methods === undefined || !Object.values(methods).every((method) => typeof method.path === 'string')) {
    throw internalError(`${file} does not define the service ${service}`);
  }
  const definition: Record<string, MethodDescriptor<unknown, unknown>> = {};
  for (const [name, method] of Object.entries(methods)) {
    definition[name] = {
      ...method,
      requestDeserialize(bytes: Buffer): unknown {
        try {
          return method.requestDeserialize(bytes);
        } catch (err) {
          throw new GrpcStatusError(GrpcStatus.INVALID_ARGUMENT, `malformed ${service}/${name} request: ${(err as Error).message}`, {
            cause: err,
          });
        }
      },
    };
  }
  return definition;
}

/** Whether a method streams its requests and its responses: what a server needs before its first call. */
export interface MethodShape {
  readonly requestStream: boolean;
  readonly responseStream: boolean;
  /** The method only reads: Connect may call it by GET (MethodDescriptor.noSideEffects). */
  readonly noSideEffects?: boolean;
}

/**
 * The methods of `service`, with their paths and stream shapes given here and their codecs
 * loaded from the .proto on the first call that needs one (`load`, called at most once).
 * A server registers the service at start without parsing the .proto: parsing it with
 * proto-loader costs about a hundred milliseconds of start-up on one core
 * (bench/PERFORMANCE.md, "Start-up"). A test holds `shapes` to what `load` returns.
 */
export function lazyProtoService(
  service: string,
  shapes: Readonly<Record<string, MethodShape>>,
  load: () => ServiceDescriptor,
): ServiceDescriptor {
  let loaded: ServiceDescriptor | undefined;
  const method = (name: string): MethodDescriptor<unknown, unknown> => {
    loaded ??= load();
    const found = loaded[name];
    if (found === undefined) throw internalError(`the .proto of ${service} does not define ${name}`);
    return found;
  };
  const definition: Record<string, MethodDescriptor<unknown, unknown>> = {};
  for (const [name, shape] of Object.entries(shapes)) {
    definition[name] = {
      path: `/${service}/${name}`,
      requestStream: shape.requestStream,
      responseStream: shape.responseStream,
      ...(shape.noSideEffects === true && { noSideEffects: true }),
      requestDeserialize: (bytes) => method(name).requestDeserialize(bytes),
      responseSerialize: (message) => method(name).responseSerialize(message),
      requestSerialize: (message) => method(name).requestSerialize!(message),
      responseDeserialize: (bytes) => method(name).responseDeserialize!(bytes),
    };
  }
  return definition;
}
