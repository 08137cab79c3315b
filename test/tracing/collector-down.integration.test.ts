/**
 * A collector that is down costs spans, never the service: calls are answered, and
 * SIGTERM still stops the server promptly (the final flush gives up instead of holding the
 * shutdown), with the export failure reported rather than thrown.
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';
import { ClientPool } from '../helpers/client.js';

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

afterEach(() => killAll());

describe('--otel with the collector down', () => {
  it('serves every call, and SIGTERM stops the server without waiting out the exporter\'s retries', async () => {
    const endpoint = `http://127.0.0.1:${await closedPort()}`;
    const server = await startCli(serveArgs('--otel', '--grace-ms', '2000'), { env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } });
    const clients = new ClientPool();
    const jwt = clients.jwt(server.port);
    for (let i = 0; i < 50; i++) expect((await jwt.generateJwt({ algorithm: 'HS256', subject: 'ada@example.com' })).jwt).not.toBe('');
    clients.closeAll();
    const started = performance.now();
    const exit = await server.stop();
    expect(exit.code, server.stderr).toBe(0);
    // The final flush gives up after 2 s (FINAL_FLUSH_TIMEOUT_MS); the exporter's retries alone take ~8 s.
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
