import type { Server } from '@grpc/grpc-js';
import { HealthImplementation, type ServingStatus } from 'grpc-health-check';
import { SERVICE_NAME } from '../service/definition.js';

/** Sets the status of the whole server ('') and of JwtService together. */
export type SetServing = (status: ServingStatus) => void;

/**
 * Adds grpc.health.v1.Health (the grpc-node team's implementation), NOT_SERVING until
 * keys are loaded and the port is bound. @internal
 */
export function addHealth(server: Server): SetServing {
  const health = new HealthImplementation({ '': 'NOT_SERVING', [SERVICE_NAME]: 'NOT_SERVING' });
  health.addToServer(server);
  return (status) => {
    health.setStatus('', status);
    health.setStatus(SERVICE_NAME, status);
  };
}
