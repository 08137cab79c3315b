/**
 * createRemoteVerifier over HTTP: `{ issuerUrl }` by discovery and `{ jwksUrl }`, against a
 * node:http server mounting jwksHandler (which counts its answers), with the cache rules of
 * the gRPC source: unknown-kid refetch, cooldown, stale on failure, and ETag revalidation.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ANY_AUDIENCE, type KeySet, createRemoteVerifier, createSigner, jwksHandler, silentLogger } from '../../src/lib/index.js';
import { sharedKeys } from '../../bench/kit/jwt-servers.js';
import { stagedRotation } from './helpers.js';

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** An issuer at http://127.0.0.1:PORT/tenant serving `keys`, counting its answers by status. */
async function issuerServer(initial: KeySet) {
  const holder = { keys: initial };
  const statuses: number[] = [];
  let issuer = '';
  let documents: ReturnType<typeof jwksHandler> | undefined;
  const server = createServer((req, res) => {
    res.on('finish', () => statuses.push(res.statusCode));
    if (!documents?.(req, res)) res.writeHead(404).end();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tenant`;
  documents = jwksHandler(holder, { issuer });
  return { holder, statuses, issuer, server };
}

async function token(keys: KeySet, issuer: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return createSigner(keys).sign('ES256', { sub: 'ada', iss: issuer, iat: now, exp: now + 600 }).token;
}

describe('createRemoteVerifier over HTTP', () => {
  it('finds the keys by discovery of an issuer URL and requires that issuer as iss', async () => {
    const keys = await sharedKeys();
    const { issuer } = await issuerServer(keys);
    const verifier = createRemoteVerifier({ issuerUrl: issuer }, { audience: ANY_AUDIENCE, logger: silentLogger });
    const result = await verifier.verify(await token(keys, issuer));
    expect(result.valid).toBe(true);
    const elsewhere = await token(keys, 'https://elsewhere.example');
    expect(await verifier.verify(elsewhere)).toMatchObject({ valid: false, reason: 'ISSUER_MISMATCH' });
    // A call's empty issuer (proto3's "not set") keeps the discovered one: it does not switch the check off.
    expect(await verifier.verify(elsewhere, { issuer: '' })).toMatchObject({ valid: false, reason: 'ISSUER_MISMATCH' });
    expect(await verifier.verify(elsewhere, {})).toMatchObject({ valid: false, reason: 'ISSUER_MISMATCH' });
  });

  it('reads a JWKS URL directly', async () => {
    const keys = await sharedKeys();
    const { issuer } = await issuerServer(keys);
    const verifier = createRemoteVerifier({ jwksUrl: `${issuer}/.well-known/jwks.json` }, { audience: ANY_AUDIENCE, logger: silentLogger });
    expect((await verifier.verify(await token(keys, issuer))).valid).toBe(true);
  });

  it('refuses a discovery document naming another issuer', async () => {
    const keys = await sharedKeys();
    const { issuer } = await issuerServer(keys);
    const verifier = createRemoteVerifier({ issuerUrl: `${issuer}/` }, { audience: ANY_AUDIENCE, logger: silentLogger });
    const refused = verifier.refresh();
    await expect(refused).rejects.toThrow(/names issuer/);
    // UNAVAILABLE to the caller, with the refused document as its cause, coded ERR_FETCH.
    await expect(refused).rejects.toMatchObject({ cause: { name: 'JwtGrpcError', code: 'ERR_FETCH' } });
    expect(() => createRemoteVerifier({ issuerUrl: 'ftp://x' }, { audience: ANY_AUDIENCE })).toThrow(/issuerUrl: must be an http\(s\) URL/);
  });

  it('revalidates with If-None-Match (304), refetches on an unknown kid, keeps the last set when the issuer is down', async () => {
    const keys = await sharedKeys();
    const { holder, statuses, issuer, server } = await issuerServer(keys);
    const verifier = createRemoteVerifier({ issuerUrl: issuer }, { audience: ANY_AUDIENCE, logger: silentLogger, cooldownMs: 0 });
    await verifier.refresh();
    await verifier.refresh();
    // discovery 200, set 200, set 304
    expect(statuses).toEqual([200, 200, 304]);

    const { staged, activated, newKid } = await stagedRotation(keys);
    holder.keys = staged;
    const signed = await token(activated, issuer);
    expect(signed).toBeTruthy();
    const result = await verifier.verify(signed);
    expect(result.valid).toBe(true);
    expect(statuses.at(-1)).toBe(200);
    expect(verifier.keys.map((key) => key.kid)).toContain(newKid);

    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await expect(verifier.refresh()).rejects.toThrow(/no JWK Set from issuer/);
    expect((await verifier.verify(signed)).valid).toBe(true);
  });
});
