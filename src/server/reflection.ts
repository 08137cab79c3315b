import type { Server } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { PROTO_LOADER_OPTIONS, jwtServiceDefinition } from '../service/definition.js';

/** Adds server reflection describing JwtService and, when present, Health. @internal */
export function addReflection(server: Server, withHealth: boolean): void {
  const health = withHealth ? loadSync(healthProtoPath, PROTO_LOADER_OPTIONS) : {};
  new ReflectionService({ ...jwtServiceDefinition().packageDefinition, ...health }).addToServer(server);
}
