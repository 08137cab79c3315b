/**
 * The discovery HTTP port (`httpPort`) and `jwksHandler`, over real HTTP on loopback:
 * documents, caching headers, methods, probes, limits, TLS, the issuer rule, and jose's
 * createRemoteJWKSet + jwtVerify (a verifier nobody here wrote) across a staged rotation.
 */
import { createServer } from 'node:http';
import { connect as connectHttp2 } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { JwtGrpcError, createJwtServer, exportKeys, jwksHandler, silentLogger } from '../../src/lib/index.js';
import { hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';
import { ClientPool } from '../../bench/kit/grpc-clients.js';
import { closeAllServers, sharedKeys, trackServer } from '../../bench/kit/jwt-servers.js';
import { stagedRotation } from './helpers.js';
import { fetchRaw } from '../../bench/kit/http.js';
import { sleep } from '../../bench/kit/wait.js';

const ISSUER = 'https://auth.example/tenant-a';
const clients = new ClientPool();
afterEach(() => clients.closeAll());
afterAll(() => closeAllServers());

async function startWithHttp(options: { issuer?: string; httpMaxAgeSeconds?: number } = {}) {
  const server = trackServer(createJwtServer({ keys: await sharedKeys(), issuer: ISSUER, httpPort: 0, logger: silentLogger, ...options }));
  const port = await server.listen('127.0.0.1:0');
  return { server, port, httpPort: server.httpPort as number };
}

describe('the discovery port', () => {
  it('serves the OpenID configuration with the issuer byte for byte, at the root and under the issuer path', async () => {
    const { httpPort } = await startWithHttp();
    for (const path of ['/.well-known/openid-configuration', '/tenant-a/.well-known/openid-configuration']) {
      const answer = await fetchRaw(httpPort, path);
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe('application/json');
      const document = JSON.parse(answer.body);
      expect(document.issuer).toBe(ISSUER);
      expect(document.jwks_uri).toBe(`${ISSUER}/.well-known/jwks.json`);
      expect(document.id_token_signing_alg_values_supported).not.toContain('HS256');
      expect(document.id_token_signing_alg_values_supported).toContain('ES256');
      expect(document.response_types_supported).toEqual(['id_token']);
      expect(document.subject_types_supported).toEqual(['public']);
    }
  });

  it('serves the same public JWK Set as GetJwks, never an HMAC key, at both JWKS paths', async () => {
    const { port, httpPort } = await startWithHttp();
    const client = clients.jwt(port);
    const grpc = JSON.parse((await client.getJwks({})).jwks_json);
    for (const path of ['/.well-known/jwks.json', '/tenant-a/.well-known/jwks.json?x=1']) {
      const answer = await fetchRaw(httpPort, path);
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toEqual(grpc);
      expect(answer.body).not.toMatch(/"kty":"oct"|"d":/);
    }
  });

  it('sends a strong ETag and Cache-Control, answers If-None-Match with 304, and HEAD without a body', async () => {
    const { httpPort } = await startWithHttp({ httpMaxAgeSeconds: 120 });
    const first = await fetchRaw(httpPort, '/.well-known/jwks.json');
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(first.headers['cache-control']).toBe('public, max-age=120');
    expect((await fetchRaw(httpPort, '/.well-known/jwks.json')).headers.etag).toBe(etag);
    const revalidated = await fetchRaw(httpPort, '/.well-known/jwks.json', { headers: { 'if-none-match': `"other", W/${etag}` } });
    expect(revalidated.status).toBe(304);
    expect(revalidated.body).toBe('');
    expect(revalidated.headers.etag).toBe(etag);
    expect((await fetchRaw(httpPort, '/.well-known/jwks.json', { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
    const head = await fetchRaw(httpPort, '/.well-known/openid-configuration', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(Number(head.headers['content-length'])).toBe(
      Buffer.byteLength((await fetchRaw(httpPort, '/.well-known/openid-configuration')).body),
    );
  });

  it('answers 405 to other methods without reading the body, 404 elsewhere', async () => {
    const { httpPort } = await startWithHttp();
    const post = await fetchRaw(httpPort, '/.well-known/jwks.json', { method: 'POST', body: 'x'.repeat(100_000) });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect(post.headers.connection).toBe('close');
    const getWithBody = await fetchRaw(httpPort, '/.well-known/jwks.json', {
      headers: { 'content-length': '1000000' },
      body: 'x'.repeat(1_000_000),
    });
    expect(getWithBody.status).toBe(200);
    expect(getWithBody.headers.connection).toBe('close');
    expect((await fetchRaw(httpPort, '/.well-known/other')).status).toBe(404);
    expect((await fetchRaw(httpPort, '/')).status).toBe(404);
  });

  it('answers /healthz and /readyz with 200 while serving and 503 while draining', async () => {
    const { server, port, httpPort } = await startWithHttp();
    expect((await fetchRaw(httpPort, '/healthz')).status).toBe(200);
    expect((await fetchRaw(httpPort, '/readyz')).status).toBe(200);
    // A call in flight (its request never ends) holds the drain open.
    const session = connectHttp2(`http://127.0.0.1:${port}`);
    const stream = session.request(
      { ':method': 'POST', ':path': '/jwt.services.JwtService/GenerateJwt', 'content-type': 'application/grpc', te: 'trailers' },
      { endStream: false },
    );
    stream.on('error', () => undefined);
    await new Promise((resolve) => session.once('remoteSettings', resolve));
    stream.write(Buffer.from([0, 0, 0, 0, 16, 1, 2])); // a message of 16 bytes, 2 sent
    await sleep(200);
    const closing = server.close({ graceMs: 3000 });
    const during = await fetchRaw(httpPort, '/readyz');
    expect(during.status).toBe(503);
    expect((await fetchRaw(httpPort, '/.well-known/jwks.json')).status).toBe(200);
    session.destroy();
    await closing;
  });

  it('refuses a request head over the limit with 431', async () => {
    const { httpPort } = await startWithHttp();
    // 10 KiB: over this port's 8 KiB, under node:http's own 16 KiB default.
    const answer = await fetchRaw(httpPort, '/.well-known/jwks.json', { headers: { 'x-big': 'a'.repeat(10_240) } });
    expect(answer.status).toBe(431);
  });

  it('closes a connection that never finishes its request head', async () => {
    const { httpPort } = await startWithHttp();
    const socket = connect(httpPort, '127.0.0.1');
    socket.write('GET /.well-known/jwks.json HTTP/1.1\r\nhost: x\r\n');
    const closedAfter = await new Promise<number>((resolve) => {
      const start = Date.now();
      socket.on('data', () => undefined);
      socket.on('close', () => resolve(Date.now() - start));
    });
    // headersTimeout 10 s, checked every second.
    expect(closedAfter).toBeGreaterThan(9_000);
    expect(closedAfter).toBeLessThan(13_000);
  }, 20_000);

  it('refuses to start without an issuer, or with one that is not an http(s) URL, naming the option', async () => {
    expect(() => createJwtServer({ httpPort: 0 })).toThrow(JwtGrpcError);
    expect(() => createJwtServer({ httpPort: 0 })).toThrow(/option issuer: is required to serve discovery/);
    expect(() => createJwtServer({ httpPort: 0, issuer: 'auth-service' })).toThrow(/option issuer: must be an http\(s\) URL/);
    expect(() => createJwtServer({ httpPort: 0, issuer: 'https://a.example/?x=1' })).toThrow(/without query or fragment/);
    expect(() => createJwtServer({ issuer: 'auth-service' })).not.toThrow();
  });

  it('serves HTTPS with the server certificate when listen gets TLS', async () => {
    if (!hasOpenssl()) return expect.soft(hasOpenssl(), 'openssl missing: TLS not checked').toBe(true);
    const certs = makeTestCerts();
    const server = trackServer(createJwtServer({ keys: await sharedKeys(), issuer: ISSUER, httpPort: 0, logger: silentLogger }));
    await server.listen('127.0.0.1:0', { cert: certs.serverCert, key: certs.serverKey, ca: certs.caCert, requireClientCertificate: true });
    const answer = await fetchRaw(server.httpPort as number, '/.well-known/jwks.json', { ca: certs.caCert });
    expect(answer.status).toBe(200);
    await expect(fetchRaw(server.httpPort as number, '/.well-known/jwks.json')).rejects.toThrow();
  });

  it('changes the set and the ETag at once on rotation; jose verifies tokens before and after a staged rotation', async () => {
    const keys = await sharedKeys();
    const { server, port, httpPort } = await startWithHttp({ issuer: `http://127.0.0.1:0/jwt` });
    const client = clients.jwt(port);
    const jwks = createRemoteJWKSet(new URL(`http://127.0.0.1:${httpPort}/jwt/.well-known/jwks.json`), { cooldownDuration: 0 });
    const before = await client.generateJwt({ algorithm: 'ES256', subject: 'ada' });
    const verified = await jwtVerify(before.jwt, jwks, { issuer: 'http://127.0.0.1:0/jwt' });
    expect(verified.payload.sub).toBe('ada');
    const etag0 = (await fetchRaw(httpPort, '/.well-known/jwks.json')).headers.etag;

    const { staged, activated, newKid } = await stagedRotation(keys);
    server.service.setKeys(staged);
    const stagedAnswer = await fetchRaw(httpPort, '/.well-known/jwks.json', { headers: { 'if-none-match': etag0 as string } });
    expect(stagedAnswer.status).toBe(200);
    expect(stagedAnswer.headers.etag).not.toBe(etag0);
    expect(JSON.parse(stagedAnswer.body).keys.map((k: { kid: string }) => k.kid)).toContain(newKid);

    server.service.setKeys(activated);
    const after = await client.generateJwt({ algorithm: 'ES256', subject: 'bob' });
    expect(JSON.parse(Buffer.from(after.jwt.split('.')[0] as string, 'base64url').toString()).kid).toBe(newKid);
    expect((await jwtVerify(after.jwt, jwks, { issuer: 'http://127.0.0.1:0/jwt' })).payload.sub).toBe('bob');
    expect((await jwtVerify(before.jwt, jwks, { issuer: 'http://127.0.0.1:0/jwt' })).payload.sub).toBe('ada');
    expect(exportKeys(server.service.keys).keys.length).toBeGreaterThan(exportKeys(keys).keys.length);
  });
});

describe('jwksHandler in your own node:http server', () => {
  it('serves the documents, follows setKeys, and leaves other paths to you', async () => {
    const keys = await sharedKeys();
    const { stagedRotation: rotate } = await import('./helpers.js');
    let current = keys;
    const documents = jwksHandler(
      {
        get keys() {
          return current;
        },
      },
      { issuer: 'https://auth.example' },
    );
    const http = createServer((req, res) => {
      if (!documents(req, res)) res.writeHead(418).end();
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    try {
      const port = (http.address() as AddressInfo).port;
      const first = await fetchRaw(port, '/.well-known/jwks.json');
      expect(JSON.parse(first.body)).toEqual(exportKeys(keys));
      expect(JSON.parse((await fetchRaw(port, '/.well-known/openid-configuration')).body).issuer).toBe('https://auth.example');
      expect((await fetchRaw(port, '/elsewhere')).status).toBe(418);
      current = (await rotate(keys)).staged;
      expect((await fetchRaw(port, '/.well-known/jwks.json')).headers.etag).not.toBe(first.headers.etag as string);
      expect(() => jwksHandler({ keys }, { maxAgeSeconds: -1 })).toThrow(/maxAgeSeconds/);
    } finally {
      http.close();
    }
  });
});

describe('the discovery server itself', () => {
  it('answers 500 when a document cannot be built, and keeps serving', async () => {
    const { serveDiscovery } = await import('../../src/discovery/server.js');
    const errors: string[] = [];
    const endpoint = await serveDiscovery({
      host: '127.0.0.1',
      port: 0,
      documents: () => {
        throw new Error('broken key set');
      },
      logger: { ...silentLogger, error: (message: string) => errors.push(message) },
      ports: { handshakeTimeoutMs: 10_000 },
    });
    try {
      expect((await fetchRaw(endpoint.port, '/.well-known/jwks.json')).status).toBe(500);
      expect((await fetchRaw(endpoint.port, '/.well-known/jwks.json')).status).toBe(500);
      expect(errors).toEqual(['discovery: cannot answer', 'discovery: cannot answer']);
    } finally {
      await endpoint.close();
    }
  });
});
