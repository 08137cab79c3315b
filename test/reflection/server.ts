/**
 * The server under test for health and reflection: `createJwtServer` on the transport
 * asked for, listening on 127.0.0.1:0, with JwtService, Health and both reflection
 * services.
 *
 * Health and reflection are added here, with `addService`, instead of by the server's
 * own `health` and `reflection` options: the tests drive the health status store
 * (setStatus, watchCount), which a JwtServer keeps to itself, and the v1alpha-only server
 * serves one reflection version alone. They are the same services the options add
 * (src/server/create.ts), wired the same way: NOT_SERVING until listening, and
 * NOT_SERVING with every Watch ended when the server closes.
 */
import { SERVICE_NAME, type Transport, createJwtServer, silentLogger } from '../../src/lib/index.js';
import { type HealthService, createHealthService } from '../../src/server/health.js';
import type { ServedService } from '../../src/contracts/handler-api.js';
import { REFLECTION_V1ALPHA_SERVICE_NAME, createReflectionServices } from '../../src/server/reflection.js';
import { sharedKeys } from '../../bench/kit/jwt-servers.js';

export interface TestServer {
  readonly port: number;
  readonly address: string;
  /** The health service's store, to change statuses and count watchers. */
  readonly health: HealthService;
  /** Sets NOT_SERVING, ends health watches, and closes (forcing after `graceMs`). */
  close(graceMs?: number): Promise<void>;
}

export interface TestServerOptions {
  readonly transport: Transport;
  /** Serve grpc.health.v1.Health. Default true. */
  readonly health?: boolean;
  /**
   * Serve only grpc.reflection.v1alpha, as servers from before v1 do, to see clients fall
   * back to it (list_services still names v1).
   */
  readonly onlyV1alpha?: boolean;
}

const running = new Set<TestServer>();

/** Starts the server under test; {@link closeTestServers} closes every one still running. */
export async function startTestServer(options: TestServerOptions): Promise<TestServer> {
  const server = createJwtServer({
    transport: options.transport,
    keys: await sharedKeys(),
    logger: silentLogger,
    health: false,
    reflection: false,
  });
  const health = createHealthService({ '': 'NOT_SERVING', [SERVICE_NAME]: 'NOT_SERVING' });
  const served: ServedService[] = [];
  if (options.health !== false) served.push(health);
  const reflection = createReflectionServices({ services: [SERVICE_NAME, ...served.map((service) => service.name)] });
  served.push(...reflection.filter((service) => !options.onlyV1alpha || service.name === REFLECTION_V1ALPHA_SERVICE_NAME));
  for (const service of served) server.addService(service.definition, service.implementation);

  const port = await server.listen('127.0.0.1:0');
  health.setStatus('', 'SERVING');
  health.setStatus(SERVICE_NAME, 'SERVING');

  let closing: Promise<void> | undefined;
  const test: TestServer = {
    port,
    address: `127.0.0.1:${port}`,
    health,
    close(graceMs = 2000) {
      closing ??= (async () => {
        running.delete(test);
        health.setStatus('', 'NOT_SERVING');
        health.setStatus(SERVICE_NAME, 'NOT_SERVING');
        health.close();
        await server.close({ graceMs });
      })();
      return closing;
    },
  };
  running.add(test);
  return test;
}

/** Closes every test server still running; for afterEach/afterAll. */
export async function closeTestServers(): Promise<void> {
  await Promise.all([...running].map((server) => server.close()));
}
