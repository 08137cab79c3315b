/**
 * Robustness under JWKS fetch load: h2load sends up to 10,000 requests/s of
 * `GET /.well-known/jwks.json` over 100 HTTP/1.1 keep-alive connections to `jwt-grpc serve
 * --http-port` for 5 s, while GenerateJwt calls run on the gRPC port. Every gRPC call must
 * succeed and every HTTP request be answered 200. The rate reached is logged, not asserted:
 * rates are measured by the benchmark harness on pinned cores, not by a unit test.
 */
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll, runStep } from '../../bench/kit/launcher.js';
import { ClientPool } from '../../bench/kit/grpc-clients.js';
import { freePort } from '../../bench/kit/ports.js';

const H2LOAD = '/usr/bin/h2load';
const DURATION_S = 5;
const CONNECTIONS = 100;
/** Per connection: 100 x 100 = the 10,000 requests/s the issue asks for. */
const RPS_PER_CONNECTION = 100;
const GRPC_IN_FLIGHT = 8;

const clients = new ClientPool();
afterAll(async () => {
  clients.closeAll();
  await killAll();
});

function h2load(url: string): Promise<string> {
  const args = ['--h1', '-c', String(CONNECTIONS), '-D', String(DURATION_S), '--rps', String(RPS_PER_CONNECTION), url];
  return runStep(H2LOAD, args, { timeoutMs: (DURATION_S + 30) * 1000 });
}

describe.skipIf(!existsSync(H2LOAD))('JWKS fetch load on the discovery port', () => {
  it('costs the gRPC service no failed call', async () => {
    const httpPort = await freePort();
    // h2load on one address stands in for a fleet of verifiers: no share per address (100
    // connections are more than the 64 of the discovery port's 256 one address may hold).
    const cli = await startCli(
      serveArgs('--issuer', `http://127.0.0.1:${httpPort}`, '--http-port', String(httpPort), '--peer-share-percent', '100'),
    );
    const client = clients.jwt(cli.port);
    let running = true;
    let ok = 0;
    const failures: string[] = [];
    const caller = async (): Promise<void> => {
      while (running) {
        try {
          await client.generateJwt({ algorithm: 'ES256', subject: 'ada' });
          ok += 1;
        } catch (err) {
          failures.push((err as Error).message);
        }
      }
    };
    const callers = Array.from({ length: GRPC_IN_FLIGHT }, caller);
    const report = await h2load(`http://127.0.0.1:${httpPort}/.well-known/jwks.json`);
    running = false;
    await Promise.all(callers);

    const requests = /requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(report);
    const codes = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(report);
    const rate = /finished in [^,]+, ([\d.]+) req\/s/.exec(report);
    console.info(`JWKS: ${rate?.[1]} req/s over ${CONNECTIONS} connections; gRPC: ${ok} GenerateJwt OK, ${failures.length} failed`);
    expect(failures).toEqual([]);
    expect(ok).toBeGreaterThan(0);
    expect(requests, report).not.toBeNull();
    expect(Number(requests?.[4])).toBeGreaterThan(0);
    expect(Number(requests?.[5]) + Number(requests?.[6]), report).toBe(0);
    expect(Number(codes?.[2]) + Number(codes?.[3]) + Number(codes?.[4]), report).toBe(0);
  }, 60_000);
});
