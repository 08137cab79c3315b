import type { Metadata as GrpcMetadata, ServiceError } from '@grpc/grpc-js';
import { grpcJs } from '../base/optional-deps.js';
import { GrpcStatus, GrpcStatusError, CallMetadata, type StatusCode } from '../contracts/handler-api.js';

/** grpc-js (1.10+) ends a connection error with the resolver's note, empty when there is none. */
const EMPTY_RESOLUTION_NOTE = /\. Resolution note: ?$/;

/** grpc-js's failed-call error as the package's {@link GrpcStatusError}, trailers included. */
export function toGrpcStatusError(err: ServiceError): GrpcStatusError {
  const metadata = new CallMetadata();
  if (err.metadata instanceof grpcJs().Metadata) {
    for (const [key, values] of Object.entries(err.metadata.toJSON())) for (const value of values) metadata.add(key, value);
  }
  return new GrpcStatusError(err.code as StatusCode, err.details.replace(EMPTY_RESOLUTION_NOTE, ''), { metadata, cause: err });
}

/** The package's metadata as grpc-js sends it. */
export function toGrpcMetadata(metadata: CallMetadata | undefined): GrpcMetadata {
  const out = new (grpcJs().Metadata)();
  if (metadata !== undefined) for (const [key, values] of metadata.entries()) for (const value of values) out.add(key, value);
  return out;
}

/** Each status code's name, from the package's own table: a verifier that names a status loads (and bundles) no grpc-js. */
const STATUS_NAMES: ReadonlyMap<number, string> = new Map(Object.entries(GrpcStatus).map(([name, code]) => [code, name]));

/** The name of a status code (`UNAVAILABLE`), for messages. */
export function statusName(code: number): string {
  return STATUS_NAMES.get(code) ?? String(code);
}
