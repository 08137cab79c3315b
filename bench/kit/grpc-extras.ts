/** Clients for the extra services a JwtServer carries (health, reflection), and a port probe. */
import { connect } from 'node:net';
import { join } from 'node:path';
import { type ClientDuplexStream, type ServiceError, credentials, status } from '@grpc/grpc-js';
import { PROTO_DIR } from '../../src/protos/load.js';
import { clientConstructor, unary } from './grpc-clients.js';

/** The health proto the server serves, from proto/. */
export const HEALTH_PROTO = join(PROTO_DIR, 'grpc', 'health', 'v1', 'health.proto');

/** The reflection protos, v1 and v1alpha, from proto/. */
export const REFLECTION_PROTOS = {
  v1: join(PROTO_DIR, 'grpc', 'reflection', 'v1', 'reflection.proto'),
  v1alpha: join(PROTO_DIR, 'grpc', 'reflection', 'v1alpha', 'reflection.proto'),
} as const;

/** grpc.health.v1.Health/Check for `service`; resolves to the status name or rejects with the ServiceError. */
export async function healthCheck(port: number, service: string): Promise<string> {
  const Health = clientConstructor(HEALTH_PROTO, 'grpc.health.v1.Health');
  const client = new Health(`127.0.0.1:${port}`, credentials.createInsecure());
  try {
    const res = await unary<{ status: string }>(client, 'Check', { service }, 10_000);
    return res.status;
  } finally {
    client.close();
  }
}

/**
 * Asks ServerReflection (v1 or v1alpha) to list the services; resolves to their names or
 * rejects with the ServiceError (e.g. UNIMPLEMENTED).
 */
export async function listServices(port: number, version: keyof typeof REFLECTION_PROTOS = 'v1'): Promise<string[]> {
  const Reflection = clientConstructor(REFLECTION_PROTOS[version], `grpc.reflection.${version}.ServerReflection`);
  const client = new Reflection(`127.0.0.1:${port}`, credentials.createInsecure());
  try {
    return await new Promise<string[]>((resolve, reject) => {
      const open = (client as unknown as { ServerReflectionInfo(options: { deadline: number }): ClientDuplexStream<unknown, unknown> })
        .ServerReflectionInfo;
      const stream = open.call(client, { deadline: Date.now() + 10_000 });
      stream.on('data', (response: { list_services_response?: { service: { name: string }[] } }) => {
        resolve((response.list_services_response?.service ?? []).map((service) => service.name));
        stream.end();
      });
      stream.on('error', (err: ServiceError) => reject(err));
      // An OK end without data: nothing listed. A failure comes as 'error'.
      stream.on('status', (end: { code: number }) => {
        if (end.code === status.OK) resolve([]);
      });
      stream.write({ list_services: '' });
    });
  } finally {
    client.close();
  }
}

/** Resolves to the error code of a plain TCP connect to 127.0.0.1:port, or 'connected'. */
export function probePort(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}
