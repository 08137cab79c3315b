/**
 * The transport a JwtServer runs on, chosen by the transport option: the own HTTP/2 server
 * or grpc-js (with the grpc-js Server exposed), each listening on a port of its own, refusing
 * an address it cannot bind with ERR_LISTEN naming it, and closing within its grace.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/base/log.js';
import { resolveServerOptions } from '../../src/server/options.js';
import { type TransportServer, createTransport } from '../../src/server/transports.js';

const open: TransportServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((server) => server.close(0)));
});

function transport(name: 'http2' | 'grpc-js'): TransportServer {
  const server = createTransport({
    options: resolveServerOptions({ transport: name }).transport,
    interceptors: [],
    logger: silentLogger,
    counters: undefined,
    deadlineCounters: undefined,
  });
  open.push(server);
  return server;
}

describe('createTransport', () => {
  for (const name of ['http2', 'grpc-js'] as const) {
    describe(name, () => {
      it('listens on a port of its own and closes', async () => {
        const server = transport(name);
        expect(server.grpcServer === undefined).toBe(name === 'http2');
        const port = await server.listen('127.0.0.1:0', undefined, undefined);
        expect(port).toBeGreaterThan(0);
        await server.close(0);
      });

      it('refuses a port in use with ERR_LISTEN naming the address', async () => {
        const first = transport(name);
        const port = await first.listen('127.0.0.1:0', undefined, undefined);
        await expect(transport(name).listen(`127.0.0.1:${port}`, undefined, undefined)).rejects.toMatchObject({
          code: 'ERR_LISTEN',
          message: expect.stringContaining(`127.0.0.1:${port}`),
        });
      });
    });
  }
});
