/**
 * Clients nobody here wrote, against grpc.testing.TestService on jwt-grpc's transport:
 * the gRPC project's own Go interop client (every test case of the call kinds served),
 * ghz and grpcurl, each at a pinned version in `.tools/` (`npm run tools` installs them).
 * The same interop cases run against the transport on Bun, and `jwt-grpc serve` on Bun
 * answers the package's own client: the benchmark's Bun row stands on both.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ENTRY } from '../../bench/kit/cli.js';
import { type CommandRun, type ServerProcess, killAll, runToExit, startServer } from '../../bench/kit/launcher.js';
import { GO_TOOLS, findBun, requireGoTool } from '../../bench/kit/tools.js';
import { createJwtClient } from '../../src/lib/index.js';
import { silentLogger } from '../../src/base/log.js';
import { createHttp2GrpcServer } from '../../src/transport/http2/server.js';
import { type TestCerts, hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';
import { frame, grpcHeaders, rawCall, unframe } from './helpers/raw.js';
import { closeAllServers, startHttp2 } from './helpers/servers.js';
import { FIXTURES_DIR, servedTestService, testServiceImplementation } from './helpers/test-service.js';

const TEST_SERVICE_PROGRAM = new URL('./helpers/serve-test-service.ts', import.meta.url).pathname;

/** Runs a client to its exit, killed after `timeoutMs`. */
const run = (command: string, args: readonly string[], timeoutMs = 30_000): Promise<CommandRun> => runToExit(command, args, { timeoutMs });

/** Asserts that the client exited 0, showing its output otherwise. */
function ok(result: CommandRun): CommandRun {
  expect(
    result.code,
    `exit ${result.code ?? result.signal}${result.timedOut ? ' (timed out)' : ''}\n${result.stdout}\n${result.stderr}`,
  ).toBe(0);
  return result;
}

/** Interop test cases (doc/interop-test-descriptions.md) for the call kinds TestService serves. */
const CASES = [
  'empty_unary',
  'large_unary',
  'client_streaming',
  'server_streaming',
  'ping_pong',
  'empty_stream',
  'timeout_on_sleeping_server',
  'cancel_after_begin',
  'cancel_after_first_response',
  'status_code_and_message',
  'special_status_message',
  'custom_metadata',
  'unimplemented_method',
  'unimplemented_service',
  'pick_first_unary',
  'rpc_soak',
  'channel_soak',
] as const;

const services = () => [[servedTestService(), testServiceImplementation()]] as const;

describe("the gRPC project's Go interop client (grpc-go v1.77.0)", () => {
  let client: string;
  let port: number;

  beforeAll(async () => {
    client = requireGoTool(GO_TOOLS.interopClient);
    ({ port } = await startHttp2(services(), { maxReceiveMessageBytes: 4 << 20 }));
  });

  it.each(CASES)('%s', async (testCase) => {
    const { stdout, stderr } = ok(
      await run(client, [
        '--server_host=127.0.0.1',
        `--server_port=${port}`,
        `--test_case=${testCase}`,
        '--soak_iterations=5',
        '--soak_overall_timeout_seconds=20',
      ]),
    );
    expect(`${stdout}${stderr}`).not.toMatch(/FATAL|panic/);
  });

  describe.skipIf(!hasOpenssl())('over TLS', () => {
    let certs: TestCerts;
    let tlsPort: number;
    const server = createHttp2GrpcServer({ maxReceiveMessageBytes: 4 << 20, logger: silentLogger });

    beforeAll(async () => {
      certs = makeTestCerts();
      server.addService(servedTestService(), testServiceImplementation());
      tlsPort = await server.listen('127.0.0.1:0', { key: certs.serverKey, cert: certs.serverCert });
    });

    afterAll(async () => {
      await server.close({ graceMs: 0 });
      certs.remove();
    });

    it.each(['large_unary', 'ping_pong', 'custom_metadata'])('%s', async (testCase) => {
      ok(
        await run(client, [
          '--server_host=127.0.0.1',
          `--server_port=${tlsPort}`,
          '--use_tls',
          '--use_test_ca',
          `--ca_file=${certs.files.caCert}`,
          '--server_host_override=localhost',
          `--test_case=${testCase}`,
        ]),
      );
    });
  });
});

const bun = findBun();

describe.skipIf('skip' in bun)(`on Bun${'skip' in bun ? ` (skipped: ${bun.skip})` : ''}`, () => {
  const runtime = (): string => (bun as { bun: string }).bun;
  let client: string;

  beforeAll(() => {
    client = requireGoTool(GO_TOOLS.interopClient);
  });
  afterAll(() => killAll());

  describe('the Go interop client against the transport run by Bun', () => {
    let server: ServerProcess;
    beforeAll(async () => {
      server = await startServer('TestService on Bun', runtime(), [TEST_SERVICE_PROGRAM]);
    });

    it.each(CASES)('%s', async (testCase) => {
      ok(
        await run(client, [
          '--server_host=127.0.0.1',
          `--server_port=${server.port}`,
          `--test_case=${testCase}`,
          '--soak_iterations=5',
          '--soak_overall_timeout_seconds=20',
        ]),
      );
    });

    describe.skipIf(!hasOpenssl())('over TLS', () => {
      let certs: TestCerts;
      let tlsServer: ServerProcess;
      beforeAll(async () => {
        certs = makeTestCerts();
        tlsServer = await startServer('TestService on Bun, TLS', runtime(), [
          TEST_SERVICE_PROGRAM,
          '--tls',
          certs.files.serverKey,
          certs.files.serverCert,
        ]);
      });
      afterAll(() => certs.remove());

      it.each(['large_unary', 'ping_pong', 'custom_metadata'])('%s', async (testCase) => {
        ok(
          await run(client, [
            '--server_host=127.0.0.1',
            `--server_port=${tlsServer.port}`,
            '--use_tls',
            '--use_test_ca',
            `--ca_file=${certs.files.caCert}`,
            '--server_host_override=localhost',
            `--test_case=${testCase}`,
          ]),
        );
      });
    });
  });

  it('jwt-grpc serve on Bun issues tokens that verify, and answers reflection', async () => {
    const server = await startServer('jwt-grpc serve on Bun', runtime(), [CLI_ENTRY, 'serve', '--host', '127.0.0.1', '--port', '0']);
    const jwt = createJwtClient(`127.0.0.1:${server.port}`, { deadlineMs: 10_000 });
    try {
      const made = await jwt.generateJwt({ algorithm: 'ES256', subject: 'bun@example.com' });
      expect(made.sub).toBe('bun@example.com');
      expect(await jwt.verifyJwt({ jwt: made.jwt })).toMatchObject({ valid: true, sub: 'bun@example.com' });
    } finally {
      jwt.close();
    }
    const listed = ok(await run(requireGoTool(GO_TOOLS.grpcurl), ['-plaintext', `127.0.0.1:${server.port}`, 'list']));
    expect(listed.stdout.split('\n')).toContain('jwt.services.JwtService');
  });
});

/**
 * The compression cases of the interop descriptions that the Go client does not have,
 * checked on the wire (compressed flag per message, grpc-encoding) with a bare client.
 */
describe('compression cases (interop descriptions), on the wire', () => {
  let port: number;
  const service = servedTestService();
  const encode = (method: string, message: unknown): Buffer => (service[method]!.requestSerialize as (m: unknown) => Buffer)(message);
  const decode = (method: string, bytes: Buffer): { payload: { body: Buffer } } =>
    (service[method]!.responseDeserialize as (b: Buffer) => { payload: { body: Buffer } })(bytes);
  const accept = { 'grpc-accept-encoding': 'identity,deflate,gzip' };

  beforeAll(async () => {
    ({ port } = await startHttp2(services()));
  });

  it('server_compressed_unary: compressed when asked, not when not', async () => {
    for (const compressed of [true, false]) {
      const res = await rawCall(port, {
        headers: grpcHeaders('/grpc.testing.TestService/UnaryCall', accept),
        chunks: [frame(encode('UnaryCall', { response_size: 314_159, response_compressed: { value: compressed } }))],
      });
      expect(res.status).toBe(0);
      const [message] = unframe(res.body);
      expect(message?.compressed).toBe(compressed);
      const bytes = compressed ? gunzipSync(message?.bytes ?? Buffer.alloc(0)) : (message?.bytes ?? Buffer.alloc(0));
      expect(decode('UnaryCall', bytes).payload.body.length).toBe(314_159);
    }
  });

  it('server_compressed_streaming: the first response compressed, the second not', async () => {
    const res = await rawCall(port, {
      headers: grpcHeaders('/grpc.testing.TestService/StreamingOutputCall', accept),
      chunks: [
        frame(
          encode('StreamingOutputCall', {
            response_parameters: [
              { size: 31_415, compressed: { value: true } },
              { size: 92_653, compressed: { value: false } },
            ],
          }),
        ),
      ],
    });
    expect(res.headers['grpc-encoding']).toBe('gzip');
    const messages = unframe(res.body);
    expect(messages.map((m) => m.compressed)).toEqual([true, false]);
    expect(decode('StreamingOutputCall', gunzipSync(messages[0]?.bytes ?? Buffer.alloc(0))).payload.body.length).toBe(31_415);
    expect(decode('StreamingOutputCall', messages[1]?.bytes ?? Buffer.alloc(0)).payload.body.length).toBe(92_653);
  });

  it('client_compressed_unary and client_compressed_streaming: gzip request messages are served', async () => {
    const unary = await rawCall(port, {
      headers: grpcHeaders('/grpc.testing.TestService/UnaryCall', { 'grpc-encoding': 'gzip' }),
      chunks: [frame(gzipSync(encode('UnaryCall', { response_size: 314_159, payload: { body: Buffer.alloc(50_000) } })), true)],
    });
    expect(unary.status).toBe(0);
    const stream = await rawCall(port, {
      headers: grpcHeaders('/grpc.testing.TestService/StreamingInputCall', { 'grpc-encoding': 'gzip' }),
      chunks: [
        frame(gzipSync(encode('StreamingInputCall', { payload: { body: Buffer.alloc(27_182) } })), true),
        frame(encode('StreamingInputCall', { payload: { body: Buffer.alloc(45_904) } }), false),
      ],
    });
    expect(stream.status).toBe(0);
    expect(
      (service.StreamingInputCall!.responseDeserialize as (b: Buffer) => unknown)(unframe(stream.body)[0]?.bytes ?? Buffer.alloc(0)),
    ).toEqual({
      aggregated_payload_size: 73_086,
    });
  });
});

describe('ghz and grpcurl', () => {
  let port: number;
  let ghz: string;

  beforeAll(async () => {
    ({ port } = await startHttp2(services()));
    ghz = requireGoTool(GO_TOOLS.ghz);
  });

  it('ghz: 2,000 unary calls over 2 connections x 50, all OK', async () => {
    const { stdout } = ok(
      await run(
        ghz,
        [
          '--insecure',
          '--import-paths',
          FIXTURES_DIR,
          '--proto',
          'grpc/testing/test.proto',
          '--call',
          'grpc.testing.TestService.UnaryCall',
          '-d',
          JSON.stringify({ response_size: 100, payload: { body: Buffer.alloc(100).toString('base64') } }),
          '-n',
          '2000',
          '-c',
          '50',
          '--connections',
          '2',
          '-O',
          'json',
          `127.0.0.1:${port}`,
        ],
        60_000,
      ),
    );
    const report = JSON.parse(stdout) as { count: number; statusCodeDistribution: Record<string, number> };
    expect(report.statusCodeDistribution).toEqual({ OK: 2000 });
  });

  describe('grpcurl v1.9.4', () => {
    let grpcurl: string;
    const base = (): string[] => ['-plaintext', '-import-path', FIXTURES_DIR, '-proto', 'grpc/testing/test.proto'];

    beforeAll(() => {
      grpcurl = requireGoTool(GO_TOOLS.grpcurl);
    });

    it('unary with metadata: response headers, message and trailers', async () => {
      const { stdout } = ok(
        await run(grpcurl, [
          ...base(),
          '-v',
          '-H',
          'x-grpc-test-echo-initial: from-grpcurl',
          '-H',
          `x-grpc-test-echo-trailing-bin: ${Buffer.from([1, 2, 3]).toString('base64')}`,
          '-d',
          JSON.stringify({ response_size: 4 }),
          `127.0.0.1:${port}`,
          'grpc.testing.TestService/UnaryCall',
        ]),
      );
      expect(stdout).toMatch(/x-grpc-test-echo-initial: from-grpcurl/);
      expect(stdout).toMatch(/"body": "AAAAAA=="/);
      expect(stdout).toMatch(/x-grpc-test-echo-trailing-bin: AQID/);
    });

    it('server streaming, and an error status grpcurl reports with its code and message', async () => {
      const { stdout } = ok(
        await run(grpcurl, [
          ...base(),
          '-d',
          JSON.stringify({ response_parameters: [{ size: 1 }, { size: 2 }, { size: 3 }] }),
          `127.0.0.1:${port}`,
          'grpc.testing.TestService/StreamingOutputCall',
        ]),
      );
      expect(stdout.match(/"body"/g)).toHaveLength(3);
      const failed = await run(grpcurl, [
        ...base(),
        '-d',
        JSON.stringify({ response_status: { code: 5, message: 'no such thing' } }),
        `127.0.0.1:${port}`,
        'grpc.testing.TestService/UnaryCall',
      ]);
      expect(failed.code).not.toBe(0);
      expect(failed.stderr).toMatch(/Code: NotFound/);
      expect(failed.stderr).toMatch(/Message: no such thing/);
    });

    it('a deadline (-max-time) the server cannot meet ends in DeadlineExceeded', async () => {
      const failed = await run(grpcurl, [
        ...base(),
        '-max-time',
        '0.3',
        '-d',
        JSON.stringify({ response_parameters: [{ size: 1, interval_us: 2_000_000 }] }),
        `127.0.0.1:${port}`,
        'grpc.testing.TestService/StreamingOutputCall',
      ]);
      expect(failed.code).not.toBe(0);
      expect(failed.stderr).toMatch(/DeadlineExceeded/);
    });
  });
});

afterAll(closeAllServers);
