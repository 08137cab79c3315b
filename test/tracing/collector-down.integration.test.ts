/**
 * A collector that is down costs spans, never the service: calls are answered, and
 * SIGTERM still stops the server promptly (the final flush gives up instead of holding the
 * shutdown), with the export failure reported rather than thrown.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';
import { ClientPool } from '../../bench/kit/grpc-clients.js';
import { freePort } from '../../bench/kit/ports.js';

afterEach(() => killAll());

describe('--otel with the collector down', () => {
  it("serves every call, and SIGTERM stops the server without waiting out the exporter's retries", async () => {
    const endpoint = `http://127.0.0.1:${await freePort()}`;
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
