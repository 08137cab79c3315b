/**
 * The Connect protocol on jwt-grpc's own transport, over loopback, with connect-node's
 * client (written elsewhere) and raw HTTP/2 requests: every JwtService method answers as
 * it does over gRPC; errors, deadlines, compression, the JSON mapping, GET, CORS, the auth
 * interceptor and the protocols option behave as the Connect specification
 * (https://connectrpc.com/docs/protocol/) says.
 */
import { Buffer } from 'node:buffer';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { ClientPool } from '../../bench/kit/grpc-clients.js';
import { closeAllServers, sharedKeys, startIssuer, startServer } from '../../bench/kit/jwt-servers.js';
import { makeClientCert } from '../../bench/kit/caller-certs.js';
import { hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';
import { ANY_AUDIENCE, JWT_SERVICE_METHODS, createVerifier, jwtAuthInterceptor } from '../../src/lib/index.js';
import { CallMetadata, type CallContext, GrpcStatus, GrpcStatusError } from '../../src/contracts/handler-api.js';
import { PROBE } from './helpers/probe.js';
import { closeAllServers as closeProbeServers, startHttp2 } from './helpers/servers.js';
import {
  JWT_SERVICE,
  type LooseJwtClient,
  envelope,
  expectAnswersAsGrpc,
  firstWatchedStatus,
  frames,
  protocolClient,
  rawRequest,
} from './helpers/protocol-clients.js';

const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-connect-'));
const SECRET = 'connect-admin-secret-0123456789';
const adminTokenFile = join(dir, 'admin-token');
writeFileSync(adminTokenFile, `${SECRET}\n`, { mode: 0o600 });
const ORIGIN = 'https://app.example';
const clients = new ClientPool();
const registry = new Registry();

afterAll(async () => {
  clients.closeAll();
  await Promise.all([closeAllServers(), closeProbeServers()]);
  rmSync(dir, { recursive: true, force: true });
});

/** An interceptor that holds a call 300 ms when it asks (`x-slow`): a call that outlives its deadline. */
const slow = {
  onCallStart: async (call: { metadata: { get(key: string): unknown } }) => void (call.metadata.get('x-slow') && (await sleep(300))),
};

/** The issuer under test: status list, revocations and an admin secret, so all five methods answer. */
const served = (async () => {
  const { port } = await startServer({
    transport: 'http2',
    keys: await sharedKeys(),
    issuer: 'https://issuer.example',
    httpPort: 0,
    statusList: true,
    revocations: join(dir, 'revocations.jsonl'),
    adminTokenFile,
    corsAllowedOrigins: [ORIGIN],
    metricsRegistry: registry,
    interceptors: [slow],
  });
  return port;
})();

const json = (body: unknown): string => JSON.stringify(body);
const post = (port: number, method: string, headers: Record<string, string>, body: Buffer | string) =>
  rawRequest(port, { ':path': `/jwt.services.JwtService/${method}`, 'content-type': 'application/json', ...headers }, body);
const get = (port: number, method: string, query: string, headers: Record<string, string> = {}) =>
  rawRequest(port, { ':method': 'GET', ':path': `/jwt.services.JwtService/${method}?${query}`, ...headers });
const errorOf = (body: Buffer): { code: string; message?: string } => JSON.parse(body.toString('utf8'));

// First in the file: the first JSON call of the process waits for the JSON mapping to load,
// and its body arrives meanwhile; the interceptors still run before its handler.
describe('the first JSON call', () => {
  it('is refused by jwtAuthInterceptor without a token, though its whole body came before the mapping loaded', async () => {
    const keys = await sharedKeys();
    const publicMethods = JWT_SERVICE_METHODS.filter((method) => !method.endsWith('/GetJwks'));
    const auth = jwtAuthInterceptor(createVerifier(keys, { audience: ANY_AUDIENCE }), { publicMethods });
    const { port } = await startServer({ transport: 'http2', keys, interceptors: [auth] });
    const refused = await post(port, 'GetJwks', {}, '{}');
    expect([refused.status, errorOf(refused.body).code]).toEqual([401, 'unauthenticated']);
  });
});

describe('Connect on the own transport', () => {
  it.each([false, true])('answers all five JwtService methods as gRPC does (binary %s)', async (binary) => {
    const port = await served;
    await expectAnswersAsGrpc(protocolClient(port, { protocol: 'connect', binary }), clients.jwt(port), SECRET);
    // The call metrics count it under its protocol.
    expect(await registry.metrics()).toMatch(
      /grpc_server_handled_total\{[^}]*grpc_method="RevokeJwt",protocol="connect",grpc_code="OK"\} [1-9]/,
    );
  });

  it.each([false, true])('streams health Watch in the streaming envelope (binary %s)', async (binary) => {
    const port = await served;
    // 1: SERVING in grpc.health.v1's enum, which the JSON mapping writes by name and the client reads back.
    expect(await firstWatchedStatus(port, { protocol: 'connect', binary })).toBe(1);
  });

  it('answers a refused call with its Connect code, the HTTP status the specification maps it to, and JSON', async () => {
    const port = await served;
    const unauthenticated = await post(port, 'RevokeJwt', {}, json({ jti: 'j', expiresAt: '4102444800' }));
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers['content-type']).toBe('application/json');
    expect(errorOf(unauthenticated.body).code).toBe('unauthenticated');
    const tooLong = await post(port, 'VerifyJwt', {}, json({ jwt: 'x'.repeat(10_000) }));
    expect(tooLong.status).toBe(400);
    expect(errorOf(tooLong.body)).toMatchObject({ code: 'invalid_argument', message: expect.stringMatching(/8192/) });
    const connect = protocolClient(port, { protocol: 'connect', binary: true });
    const err = await connect.generateJwt({ algorithm: 'NONE256' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.InvalidArgument);
  });

  it('ends a call past its connect-timeout-ms deadline_exceeded (504), while a call without one is served', async () => {
    const port = await served;
    const [late, patient] = await Promise.all([
      post(port, 'GetJwks', { 'connect-timeout-ms': '50', 'x-slow': '1' }, '{}'),
      post(port, 'GetJwks', { 'x-slow': '1' }, '{}'),
    ]);
    expect(late.status).toBe(504);
    expect(errorOf(late.body)).toMatchObject({ code: 'deadline_exceeded', message: expect.stringContaining('connect-timeout-ms 50') });
    expect(patient.status).toBe(200);
    const malformed = await post(port, 'GetJwks', { 'connect-timeout-ms': '5s' }, '{}');
    expect([malformed.status, errorOf(malformed.body).code]).toEqual([400, 'invalid_argument']);
  });

  it('reads a gzip request, and refuses an encoding it lacks as unimplemented, naming gzip', async () => {
    const port = await served;
    const zipped = await post(port, 'GenerateJwt', { 'content-encoding': 'gzip' }, gzipSync(json({ algorithm: 'ES256', subject: 'gz' })));
    expect(zipped.status).toBe(200);
    expect(JSON.parse(zipped.body.toString()).sub).toBe('gz');
    const brotli = await post(port, 'GenerateJwt', { 'content-encoding': 'br' }, '{}');
    expect(brotli.status).toBe(501);
    expect(brotli.headers['accept-encoding']).toBe('gzip');
    expect(errorOf(brotli.body).code).toBe('unimplemented');
  });

  it('refuses a JSON field the message does not have, naming it, a body over the limit, and reads 64-bit integers as strings', async () => {
    const port = await served;
    const unknown = await post(port, 'GenerateJwt', {}, json({ algorithm: 'ES256', subjekt: 'ada' }));
    expect(unknown.status).toBe(400);
    expect(errorOf(unknown.body)).toMatchObject({ code: 'invalid_argument', message: expect.stringContaining('subjekt') });
    const large = await post(port, 'GenerateJwt', {}, json({ algorithm: 'ES256', subject: 'a'.repeat(70_000) }));
    expect(large.status).toBe(429);
    expect(errorOf(large.body)).toMatchObject({ code: 'resource_exhausted', message: expect.stringContaining('65536') });
    const answer = await post(port, 'GenerateJwt', {}, json({ algorithm: 'ES256', subject: 'ada', ttlSeconds: '60' }));
    expect(answer.status).toBe(200);
    const body = JSON.parse(answer.body.toString()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['expiresAt', 'jwt', 'kid', 'sub']);
    expect(body.expiresAt).toMatch(/^\d+$/);
  });

  it('serves GetJwks by GET with an ETag (304 when the client has it), and refuses GenerateJwt by GET with 405', async () => {
    const port = await served;
    const first = await get(port, 'GetJwks', 'connect=v1&encoding=json&message=%7B%7D');
    expect(first.status).toBe(200);
    expect(first.headers['cache-control']).toBe('public, max-age=300');
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(JSON.parse(first.body.toString()).jwksJson).toContain('"keys"');
    const again = await get(port, 'GetJwks', 'connect=v1&encoding=json&message=%7B%7D', { 'if-none-match': etag });
    expect([again.status, again.body.length]).toEqual([304, 0]);
    const binary = await get(port, 'GetJwks', 'encoding=proto&base64=1&message=');
    expect(binary.status).toBe(200);
    const refused = await get(port, 'GenerateJwt', `encoding=json&message=${encodeURIComponent(json({ algorithm: 'ES256' }))}`);
    expect(refused.status).toBe(405);
    expect(refused.headers.allow).toBe('POST');
    expect(errorOf(refused.body).code).toBe('unimplemented');
  });

  it('answers the preflight of an allowed origin, and neither the preflight nor the answers of any other', async () => {
    const port = await served;
    const preflight = (origin: string) =>
      rawRequest(port, {
        ':method': 'OPTIONS',
        ':path': '/jwt.services.JwtService/GenerateJwt',
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,connect-protocol-version',
      });
    const allowed = await preflight(ORIGIN);
    expect(allowed.status).toBe(204);
    expect(allowed.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(allowed.headers['access-control-allow-headers']).toContain('connect-protocol-version');
    const other = await preflight('https://evil.example');
    expect(other.status).toBe(403);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    const fromApp = await post(port, 'GetJwks', { origin: ORIGIN }, '{}');
    expect(fromApp.headers['access-control-allow-origin']).toBe(ORIGIN);
    const fromOther = await post(port, 'GetJwks', { origin: 'https://evil.example' }, '{}');
    expect([fromOther.status, fromOther.headers['access-control-allow-origin']]).toEqual([200, undefined]);
  });

  it('lets jwtAuthInterceptor refuse a Connect call without a token, and pass one with a valid token', async () => {
    const keys = await sharedKeys();
    const verifier = createVerifier(keys, { audience: ANY_AUDIENCE });
    const publicMethods = JWT_SERVICE_METHODS.filter((method) => !method.endsWith('/GetJwks'));
    const { port } = await startServer({ transport: 'http2', keys, interceptors: [jwtAuthInterceptor(verifier, { publicMethods })] });
    const refused = await post(port, 'GetJwks', {}, '{}');
    expect([refused.status, errorOf(refused.body).code]).toEqual([401, 'unauthenticated']);
    const token = (await clients.jwt(port).generateJwt({ algorithm: 'ES256', subject: 'ada' })).jwt;
    const allowed = await post(port, 'GetJwks', { authorization: `Bearer ${token}` }, '{}');
    expect(allowed.status).toBe(200);
  });

  it.skipIf(!hasOpenssl())('names the caller of a Connect call by its verified client certificate, as of a gRPC call', async () => {
    const certs = makeTestCerts();
    try {
      const orders = makeClientCert(certs, 'orders', 'URI:spiffe://example.org/ns/shop/sa/orders');
      const callers: (string | undefined)[] = [];
      const tls = { key: certs.serverKey, cert: certs.serverCert, ca: certs.caCert, requireClientCertificate: true };
      const { port } = await startIssuer(
        { keys: await sharedKeys(), interceptors: [{ onCallStart: (call) => void callers.push(call.caller?.id) }] },
        tls,
      );
      const transport = createConnectTransport({
        baseUrl: `https://localhost:${port}`,
        httpVersion: '2',
        nodeOptions: { ca: certs.caCert, cert: orders.cert, key: orders.key },
      });
      const client = createClient(JWT_SERVICE, transport) as unknown as LooseJwtClient;
      expect((await client.getJwks({})).jwksJson).toContain('"keys"');
      expect(callers).toEqual(['spiffe://example.org/ns/shop/sa/orders']);
    } finally {
      certs.remove();
    }
  });

  it('serves only the protocols named: a gRPC-only server answers Connect 415; grpc-js refuses Connect, naming the option', async () => {
    const { port } = await startServer({ transport: 'http2', keys: await sharedKeys(), protocols: ['grpc'] });
    const refused = await post(port, 'GetJwks', {}, '{}');
    expect(refused.status).toBe(415);
    expect(await clients.jwt(port).getJwks()).toHaveProperty('jwks_json');
    await expect(startServer({ transport: 'grpc-js', keys: await sharedKeys(), protocols: ['grpc', 'connect'] })).rejects.toMatchObject({
      code: 'ERR_INVALID_OPTION',
      message: expect.stringMatching(/^option protocols: connect needs transport 'http2'/),
    });
  });
});

/** A google.protobuf.Any as bytes: type_url (field 1) and value (field 2). */
function anyBytes(typeUrl: string, value: Buffer): Buffer {
  const url = Buffer.from(typeUrl);
  return Buffer.concat([Buffer.from([0x0a, url.length]), url, Buffer.from([0x12, value.length]), value]);
}

describe("error details (gRPC's richer error model) over Connect and gRPC-Web", () => {
  // google.rpc.ErrorInfo { reason: "KEY" } in a google.rpc.Status { code: 5, message: "no key", details: [it] }.
  const info = Buffer.from([0x0a, 0x03, ...Buffer.from('KEY')]);
  const detail = anyBytes('type.googleapis.com/google.rpc.ErrorInfo', info);
  const status = Buffer.concat([Buffer.from([0x08, 0x05, 0x12, 0x06]), Buffer.from('no key'), Buffer.from([0x1a, detail.length]), detail]);
  const fail = (): never => {
    throw new GrpcStatusError(GrpcStatus.NOT_FOUND, 'no key', {
      metadata: new CallMetadata().set('grpc-status-details-bin', status).set('x-why', 'absent'),
    });
  };
  const served = startHttp2([[PROBE, { Unary: fail, ServerStream: fail, ClientStream: fail, Bidi: fail }]]);
  const probe = async (path: string, contentType: string, body: Buffer | string) =>
    rawRequest((await served).port, { ':path': path, 'content-type': contentType }, body);
  const expected = { type: 'google.rpc.ErrorInfo', value: info.toString('base64').replace(/=+$/, '') };

  it('lists them in a unary error, its other trailers kept as trailer- headers', async () => {
    const answer = await probe('/test.Probe/Unary', 'application/proto', '{}');
    expect(answer.status).toBe(404);
    expect(errorOf(answer.body)).toEqual({ code: 'not_found', message: 'no key', details: [expected] });
    expect(answer.headers['trailer-x-why']).toBe('absent');
    expect(answer.headers['trailer-grpc-status-details-bin']).toBeUndefined();
  });

  it("lists them in a stream's end-stream error, its other trailers kept as metadata", async () => {
    const answer = await probe('/test.Probe/ServerStream', 'application/connect+proto', envelope(Buffer.from('{}')));
    const [end] = frames(answer.body);
    expect(end?.flag).toBe(2);
    expect(JSON.parse(end?.payload.toString('utf8') ?? '')).toEqual({
      error: { code: 'not_found', message: 'no key', details: [expected] },
      metadata: { 'x-why': ['absent'] },
    });
  });

  it("carries the google.rpc.Status in gRPC-Web's trailer frame", async () => {
    const answer = await probe('/test.Probe/Unary', 'application/grpc-web+proto', envelope(Buffer.from('{}')));
    const trailer =
      frames(answer.body)
        .find((frame) => frame.flag === 0x80)
        ?.payload.toString('latin1') ?? '';
    const value = /^grpc-status-details-bin:(.*)$/m.exec(trailer)?.[1]?.trim() ?? '';
    expect(Buffer.from(value, 'base64')).toEqual(status);
    expect(trailer).toMatch(/^grpc-status:5\r$/m);
  });

  it('answers a Connect unary call to a path nothing serves 404 unimplemented, as Connect clients expect', async () => {
    const answer = await probe('/test.Probe/Nothing', 'application/proto', '{}');
    expect([answer.status, errorOf(answer.body).code]).toEqual([404, 'unimplemented']);
  });
});

describe('Connect for a service of your own (test.Probe, its own codecs)', () => {
  const served = startHttp2([
    [
      PROBE,
      {
        Unary: (request: unknown, call: CallContext) => {
          call.setResponseCompression('gzip');
          call.sendMetadata(new CallMetadata().set('x-region', 'eu'));
          call.setTrailers(new CallMetadata().set('x-served-by', 'eu-1'));
          return request;
        },
        ServerStream: () => {},
        ClientStream: async (requests: AsyncIterable<{ n: number }>, call: CallContext) => {
          let total = 0;
          for await (const { n } of requests) total += n;
          call.setTrailers(new CallMetadata().set('x-count', 'done'));
          return { total };
        },
        Bidi: () => {
          throw new GrpcStatusError(GrpcStatus.NOT_FOUND, 'no such stream');
        },
      },
    ],
  ]);
  const probe = async (method: string, contentType: string, headers: Record<string, string>, body: Buffer | string) =>
    rawRequest((await served).port, { ':path': `/test.Probe/${method}`, 'content-type': contentType, ...headers }, body);

  it('answers a unary call with its metadata as headers, its trailers as trailer- headers, gzip when the client accepts it', async () => {
    const zipped = await probe('Unary', 'application/proto', { 'accept-encoding': 'gzip' }, '{"hi":1}');
    expect(zipped.headers).toMatchObject({ 'content-encoding': 'gzip', 'x-region': 'eu', 'trailer-x-served-by': 'eu-1' });
    expect(gunzipSync(zipped.body).toString()).toBe('{"hi":1}');
    const plain = await probe('Unary', 'application/proto', {}, '{"hi":2}');
    expect([plain.headers['content-encoding'], plain.body.toString()]).toEqual([undefined, '{"hi":2}']);
  });

  it('streams: enveloped requests in, the answer and the end-stream message (trailers, or the error) out', async () => {
    const body = Buffer.concat([envelope(Buffer.from('{"n":2}')), envelope(Buffer.from('{"n":3}'))]);
    const summed = await probe('ClientStream', 'application/connect+proto', {}, body);
    expect([summed.status, summed.headers['content-type']]).toEqual([200, 'application/connect+proto']);
    const [answer, end] = frames(summed.body);
    expect([answer?.flag, answer?.payload.toString()]).toEqual([0, '{"total":5}']);
    expect([end?.flag, JSON.parse(end?.payload.toString() ?? '')]).toEqual([2, { metadata: { 'x-count': ['done'] } }]);
    const refused = await probe('Bidi', 'application/connect+proto', {}, envelope(Buffer.from('{}')));
    expect(refused.status).toBe(200);
    const last = frames(refused.body).at(-1);
    expect([last?.flag, JSON.parse(last?.payload.toString() ?? '')]).toEqual([
      2,
      { error: { code: 'not_found', message: 'no such stream' } },
    ]);
  });
});
