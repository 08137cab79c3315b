import { createServer } from 'node:net';

/**
 * A loopback port free right now, for a process that must be told its port before it
 * starts (nginx cannot report the port of `listen ...:0`, Redis, an issuer whose URL is
 * in its own options). Another process may take it before the caller binds it: callers
 * that can, retry with another.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
