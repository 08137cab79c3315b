/**
 * The grpc-js transport's guards (memory ceilings and stall bound, handshake deadline and
 * connection cap) wrap private members of grpc-js's Server. A grpc-js without them gets no
 * server: serving unguarded would fail open, so createJwtServer refuses, naming the guard;
 * one whose node:http2 servers get grpc-js's 'stream' listener only later cannot listen.
 */
import type { Http2Server } from 'node:http2';
import { Server } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { createJwtServer, silentLogger } from '../../src/lib/index.js';
import { sharedKeys } from '../../bench/kit/jwt-servers.js';

/** Runs `body` with grpc-js's Server lacking the private member `name`, as a future grpc-js might. */
async function without<T>(name: 'createHttp2Server', body: () => Promise<T> | T): Promise<T> {
  const prototype = Server.prototype as unknown as Record<string, unknown>;
  const saved = prototype[name];
  prototype[name] = undefined;
  try {
    return await body();
  } finally {
    prototype[name] = saved;
  }
}

describe('the grpc-js transport without the members its guards wrap', () => {
  it('is refused at creation (ERR_GRPC_JS_VERSION) naming the guard it cannot apply, not served unguarded', async () => {
    const keys = await sharedKeys();
    await without('createHttp2Server', () => {
      expect(() => createJwtServer({ keys, transport: 'grpc-js', logger: silentLogger })).toThrow(
        expect.objectContaining({
          code: 'ERR_GRPC_JS_VERSION',
          field: 'transport',
          message: expect.stringContaining("use transport 'http2'"),
        }),
      );
    });
  });

  it("fails to listen (ERR_LISTEN, naming why) on a grpc-js that adds its 'stream' listener after createHttp2Server, out of the memory guard's reach", async () => {
    const keys = await sharedKeys();
    const prototype = Server.prototype as unknown as { createHttp2Server: (...args: unknown[]) => Http2Server };
    const create = prototype.createHttp2Server;
    prototype.createHttp2Server = function (this: unknown, ...args: unknown[]): Http2Server {
      const http2Server = create.apply(this, args);
      const listeners = http2Server.listeners('stream') as ((...a: unknown[]) => void)[];
      http2Server.removeAllListeners('stream');
      queueMicrotask(() => {
        for (const listener of listeners) http2Server.on('stream', listener);
      });
      return http2Server;
    };
    const server = createJwtServer({ keys, transport: 'grpc-js', logger: silentLogger });
    try {
      await expect(server.listen('127.0.0.1:0')).rejects.toThrow(
        expect.objectContaining({
          code: 'ERR_LISTEN',
          message: expect.stringContaining("adds its 'stream' listener after createHttp2Server"),
        }),
      );
    } finally {
      prototype.createHttp2Server = create;
      await server.close();
    }
  });

  it('is served when they are there', async () => {
    const server = createJwtServer({ keys: await sharedKeys(), transport: 'grpc-js', logger: silentLogger });
    await server.close();
  });
});
