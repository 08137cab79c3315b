/**
 * gRPC-Web (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-WEB.md) on jwt-grpc's
 * own transport, over loopback, with connect-node's gRPC-Web client (written elsewhere)
 * and raw HTTP/2 requests: every JwtService method answers as over gRPC; the status
 * travels in the trailer frame; deadlines, compression, the text (base64) framing, the
 * message size limit and the request deadline hold as they do for gRPC.
 */
import { Buffer } from 'node:buffer';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import { Code, ConnectError } from '@connectrpc/connect';
import { afterAll, describe, expect, it } from 'vitest';
import { ClientPool } from '../../bench/kit/grpc-clients.js';
import { closeAllServers, sharedKeys, startServer } from '../../bench/kit/jwt-servers.js';
import { encodeGenerateJwtRequest } from '../../src/jwt-service/codec/encode-request.js';
import { envelope, expectAnswersAsGrpc, firstWatchedStatus, frames, protocolClient, rawRequest } from './helpers/protocol-clients.js';

const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-grpc-web-'));
const SECRET = 'grpc-web-admin-secret-0123456789';
const adminTokenFile = join(dir, 'admin-token');
writeFileSync(adminTokenFile, `${SECRET}\n`, { mode: 0o600 });
const ORIGIN = 'https://app.example';
const clients = new ClientPool();

afterAll(async () => {
  clients.closeAll();
  await closeAllServers();
  rmSync(dir, { recursive: true, force: true });
});

/** Holds a call 300 ms when it asks (`x-slow`): a call that outlives its deadline. */
const slow = {
  onCallStart: async (call: { metadata: { get(key: string): unknown } }) => void (call.metadata.get('x-slow') && (await sleep(300))),
};

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
    maxReceiveMessageBytes: 4096,
    requestTimeoutMs: 200,
    interceptors: [slow],
  });
  return port;
})();

const GENERATE = encodeGenerateJwtRequest({ algorithm: 'ES256', subject: 'ada' });
const call = (port: number, method: string, headers: Record<string, string>, body: Buffer | string, keepOpen = false) =>
  rawRequest(
    port,
    { ':path': `/jwt.services.JwtService/${method}`, 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1', ...headers },
    body,
    keepOpen,
  );

/** The trailer frame's fields (flag 0x80), as `name: value`. */
function trailers(body: Buffer): Record<string, string> {
  const last = frames(body).at(-1);
  expect(last?.flag).toBe(0x80);
  const fields: Record<string, string> = {};
  for (const line of (last?.payload.toString('latin1') ?? '').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 1).trim();
  }
  return fields;
}

describe('gRPC-Web on the own transport', () => {
  it.each([true, false])('answers all five JwtService methods as gRPC does (binary %s)', async (binary) => {
    const port = await served;
    await expectAnswersAsGrpc(protocolClient(port, { protocol: 'grpc-web', binary }), clients.jwt(port), SECRET);
  });

  it.each([true, false])('streams health Watch in gRPC-Web frames (binary %s)', async (binary) => {
    const port = await served;
    expect(await firstWatchedStatus(port, { protocol: 'grpc-web', binary })).toBe(1); // SERVING
  });

  it('sends the status in the trailer frame, and a client reads it as the gRPC status', async () => {
    const port = await served;
    const ok = await call(port, 'GenerateJwt', {}, envelope(GENERATE));
    expect([ok.status, ok.headers['content-type']]).toEqual([200, 'application/grpc-web+proto']);
    expect(frames(ok.body).map((frame) => frame.flag)).toEqual([0, 0x80]);
    expect(trailers(ok.body)['grpc-status']).toBe('0');
    const refused = await call(port, 'RevokeJwt', {}, envelope(Buffer.alloc(0)));
    expect(trailers(refused.body)['grpc-status']).toBe(String(Code.Unauthenticated));
    const err = await protocolClient(port, { protocol: 'grpc-web', binary: true })
      .revokeJwt({ jti: 'j', expiresAt: 4102444800n })
      .catch((e: unknown) => e);
    expect((err as ConnectError).code).toBe(Code.Unauthenticated);
  });

  it('ends a call past its grpc-timeout DEADLINE_EXCEEDED, and a request never ended at the request deadline', async () => {
    const port = await served;
    const late = await call(port, 'GetJwks', { 'grpc-timeout': '50m', 'x-slow': '1' }, envelope(Buffer.alloc(0)));
    expect(trailers(late.body)).toMatchObject({ 'grpc-status': '4', 'grpc-message': expect.stringContaining('grpc-timeout 50m') });
    const started = performance.now();
    let answered = false;
    const stalling = call(port, 'GetJwks', {}, envelope(Buffer.alloc(0)), true).finally(() => {
      answered = true;
    });
    // A caller beside the stalled one is served meanwhile, on both protocols.
    const [grpc, web] = await Promise.all([
      clients.jwt(port).getJwks(),
      protocolClient(port, { protocol: 'grpc-web', binary: true }).getJwks({}),
    ]);
    expect(web.jwksJson).toBe(grpc.jwks_json);
    expect(answered, 'the stalled request is still held while they are served').toBe(false);
    const stalled = await stalling;
    expect(trailers(stalled.body)['grpc-status']).toBe('4');
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('reads a gzip message, refuses an unknown encoding UNIMPLEMENTED, and a message over the limit RESOURCE_EXHAUSTED unread', async () => {
    const port = await served;
    const zipped = await call(port, 'GenerateJwt', { 'grpc-encoding': 'gzip' }, envelope(gzipSync(GENERATE), 1));
    expect(trailers(zipped.body)['grpc-status']).toBe('0');
    const snappy = await call(port, 'GenerateJwt', { 'grpc-encoding': 'snappy' }, envelope(GENERATE));
    expect(trailers(snappy.body)['grpc-status']).toBe(String(Code.Unimplemented));
    const header = Buffer.alloc(5);
    header.writeUInt32BE(1 << 20, 1);
    const tooLarge = await call(port, 'GenerateJwt', {}, header, true);
    expect(trailers(tooLarge.body)).toMatchObject({
      'grpc-status': String(Code.ResourceExhausted),
      'grpc-message': expect.stringContaining('4096'),
    });
  });

  it('speaks grpc-web-text: a base64 request in padded segments, a base64 answer', async () => {
    const port = await served;
    const message = envelope(GENERATE);
    const half = 7; // a segment boundary inside the prefix, each segment padded on its own
    const body = message.subarray(0, half).toString('base64') + message.subarray(half).toString('base64');
    const answer = await call(port, 'GenerateJwt', { 'content-type': 'application/grpc-web-text' }, body);
    expect(answer.headers['content-type']).toBe('application/grpc-web-text+proto');
    const decoded = Buffer.concat(
      answer.body
        .toString('latin1')
        .split(/(?<==)(?=[^=])/)
        .map((segment) => Buffer.from(segment, 'base64')),
    );
    expect(frames(decoded).map((frame) => frame.flag)).toEqual([0, 0x80]);
    expect(trailers(decoded)['grpc-status']).toBe('0');
  });

  it('lets an allowed origin read the status headers (CORS), and gives another origin no CORS header', async () => {
    const port = await served;
    const allowed = await call(port, 'GetJwks', { origin: ORIGIN }, envelope(Buffer.alloc(0)));
    expect(allowed.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(allowed.headers['access-control-expose-headers']).toContain('grpc-status');
    const other = await call(port, 'GetJwks', { origin: 'https://evil.example' }, envelope(Buffer.alloc(0)));
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    expect(trailers(other.body)['grpc-status']).toBe('0');
  });

  it('answers a refused call to a client written elsewhere with the status it understands', async () => {
    const port = await served;
    const err = await protocolClient(port, { protocol: 'grpc-web', binary: false })
      .generateJwt({ algorithm: 'NONE256' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.InvalidArgument);
  });
});
