/**
 * grpcio, gRPC's Python library (on gRPC core), as the client: unary calls with gzip,
 * metadata (-bin included), a status with unicode, a deadline, an unknown method, a
 * malformed and an oversized request. grpcio comes from a venv under `.tools/` at a
 * pinned version (`npm run tools` makes it); the test is skipped, saying why, only when
 * python3 is not on PATH.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeAllServers, startHttp2 } from './helpers/servers.js';
import { servedTestService, testServiceImplementation } from './helpers/test-service.js';
import { runToExit } from '../../bench/kit/launcher.js';
import { GRPCIO, requireGrpcio } from '../../bench/kit/tools.js';

const SCRIPT = join(import.meta.dirname, 'python', 'grpcio_client.py');

const python = requireGrpcio();
if ('skip' in python) console.warn(`grpcio test skipped: ${python.skip}`);

describe.skipIf('skip' in python)(`grpcio ${GRPCIO.grpcio} client`, () => {
  let results: Record<string, Record<string, unknown>>;

  beforeAll(async () => {
    const { port } = await startHttp2([[servedTestService(), testServiceImplementation()]]);
    const run = await runToExit((python as { python: string }).python, [SCRIPT, String(port)], { timeoutMs: 60_000 });
    if (run.code !== 0) throw new Error(`${SCRIPT} exited ${run.code ?? run.signal}${run.timedOut ? ' (timed out)' : ''}:\n${run.stderr}`);
    results = JSON.parse(run.stdout) as typeof results;
  }, 120_000);

  afterAll(closeAllServers);

  it('gzip: a compressed request, and a compressed response', () => {
    expect(results.gzip).toEqual({ code: 'OK', details: '', response_bytes: 3000 });
  });

  it('metadata: ASCII echoed in the headers, -bin bytes in the trailers', () => {
    expect(results.metadata).toEqual({ code: 'OK', details: '', initial: 'hello from python', trailing_bin_hex: '0001feff' });
  });

  it('a status with unicode and newlines round-trips', () => {
    expect(results.status).toEqual({ code: 'FAILED_PRECONDITION', details: '\t\nfrom python: ☺ 😈\r\n', round_trip: true });
  });

  it('a deadline the server cannot meet: DEADLINE_EXCEEDED', () => {
    expect(results.deadline?.code).toBe('DEADLINE_EXCEEDED');
  });

  it('an unknown method: UNIMPLEMENTED naming it', () => {
    expect(results.unknown_method).toEqual({
      code: 'UNIMPLEMENTED',
      details: 'unknown method NoSuchMethod of service grpc.testing.TestService',
    });
  });

  it('a malformed request: INTERNAL (the status code document\'s "error parsing request proto")', () => {
    expect(results.malformed?.code).toBe('INTERNAL');
    expect(results.malformed?.details).toMatch(/could not parse the request message of \/grpc\.testing\.TestService\/UnaryCall/);
  });

  it('an oversized request: RESOURCE_EXHAUSTED, and the connection serves on', () => {
    expect(results.oversized?.code).toBe('RESOURCE_EXHAUSTED');
    expect(results.oversized?.details).toMatch(/exceeds the limit of 65536 bytes/);
    expect(results.after).toEqual({ code: 'OK', details: '', response_bytes: 7 });
  });
});
