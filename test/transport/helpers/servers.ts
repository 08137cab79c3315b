/** Servers a test file starts, closed together in its afterAll. */
import { Server, ServerCredentials } from '@grpc/grpc-js';
import type { Logger } from '../../../src/base/log.js';
import { recordingLogger } from '../../../bench/kit/jwt-servers.js';
import { addServiceToGrpcJs } from '../../../src/transport/grpc-js.js';
import { type Http2GrpcServer, createHttp2GrpcServer } from '../../../src/transport/http2/server.js';
import type { Http2GrpcServerOptions } from '../../../src/transport/http2/options.js';
import type { CallInterceptor, ServiceDescriptor, ServiceImplementation } from '../../../src/contracts/handler-api.js';

const open = new Set<{ close(): Promise<void> }>();

export type Services = readonly (readonly [ServiceDescriptor, ServiceImplementation])[];

/** jwt-grpc's own gRPC server on 127.0.0.1:0 with `services`. */
export async function startHttp2(
  services: Services,
  options: Http2GrpcServerOptions = {},
): Promise<{ server: Http2GrpcServer; port: number }> {
  const server = createHttp2GrpcServer({ logger: recordingLogger(), ...options });
  for (const [definition, implementation] of services) server.addService(definition, implementation);
  const port = await server.listen('127.0.0.1:0');
  const entry = { close: () => server.close({ graceMs: 0 }) };
  open.add(entry);
  return { server, port };
}

/** The same services on a grpc-js Server through the adapter. */
export async function startGrpcJs(
  services: Services,
  options: {
    interceptors?: readonly CallInterceptor[];
    logger?: Logger;
    channelOptions?: Record<string, unknown>;
    prepare?: (server: Server) => void;
  } = {},
): Promise<{ server: Server; port: number }> {
  const server = new Server(options.channelOptions ?? {});
  options.prepare?.(server);
  for (const [definition, implementation] of services) {
    addServiceToGrpcJs(server, definition, implementation, {
      interceptors: options.interceptors ?? [],
      logger: options.logger ?? recordingLogger(),
    });
  }
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, bound) => (err === null ? resolve(bound) : reject(err))),
  );
  open.add({ close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())).then(() => server.forceShutdown()) });
  return { server, port };
}

export async function closeAllServers(): Promise<void> {
  const all = [...open];
  open.clear();
  await Promise.all(all.map((entry) => entry.close()));
}
