/**
 * The remote verifier's checks of a Status List Token (draft-ietf-oauth-status-list-20
 * sections 5.1, 8.2, 8.3), against an issuer on loopback whose list endpoint the test
 * controls: each check refuses a list that breaks it, and the cache keeps a list past its
 * ttl only while the issuer is unreachable, and only until the list's exp or the verifier's
 * maxStaleMs, whichever comes first.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ANY_AUDIENCE,
  type KeySet,
  type RemoteVerifierOptions,
  createRemoteVerifier,
  createSigner,
  generateKeys,
  jwksHandler,
  silentLogger,
} from '../../src/lib/index.js';
import { StatusList } from '../../src/revocation/status-list/list.js';
import { signStatusListToken } from '../../src/revocation/status-list/token.js';

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

type ListAnswer = { status: number; type?: string; body?: string; location?: string };

/** An issuer at http://127.0.0.1:PORT serving `keys`, with the list endpoint answering whatever `answer()` says. */
async function issuer(keys: KeySet) {
  const state: { answer: () => ListAnswer; fetches: number } = { answer: () => ({ status: 404 }), fetches: 0 };
  let documents: ReturnType<typeof jwksHandler> | undefined;
  const server = createServer((req, res) => {
    if (documents?.(req, res)) return;
    if (req.url === '/statuslists/1') {
      state.fetches++;
      const { status, type, body, location } = state.answer();
      res.writeHead(status, { ...(type !== undefined && { 'content-type': type }), ...(location !== undefined && { location }) }).end(body);
      return;
    }
    res.writeHead(404).end();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  documents = jwksHandler({ keys }, { issuer: url });
  return { url, uri: `${url}/statuslists/1`, state };
}

const now = (): number => Math.floor(Date.now() / 1000);

function listToken(keys: KeySet, claims: { sub: string; ttl?: number; exp?: number; revoked?: number[]; iat?: number }): string {
  const list = new StatusList(64);
  for (const idx of claims.revoked ?? []) list.set(idx);
  const iat = claims.iat ?? now();
  return signStatusListToken(keys, 'ES256', {
    sub: claims.sub,
    iat,
    exp: claims.exp ?? iat + 120,
    ttl: claims.ttl ?? 60,
    status_list: list.json(),
  });
}

function token(keys: KeySet, iss: string, uri: string, idx: number): string {
  return createSigner(keys).sign('ES256', { sub: 'ada', iss, iat: now(), exp: now() + 600, status: { status_list: { idx, uri } } }).token;
}

const JWT_TYPE = 'application/statuslist+jwt';

describe('the status list a remote verifier accepts', () => {
  it('refuses a list that is not statuslist+jwt, names another sub, is signed by an unknown key, or has the wrong content type', async () => {
    const keys = await generateKeys({ algorithms: ['ES256'] });
    const other = await generateKeys({ algorithms: ['ES256'] });
    const { url, uri, state } = await issuer(keys);
    const good = listToken(keys, { sub: uri });
    const plainJwt = createSigner(keys).sign('ES256', {
      sub: uri,
      iat: now(),
      exp: now() + 60,
      ttl: 60,
      status_list: { bits: 1, lst: 'eNrbuRgAAhcBXQ' },
    }).token;
    const cases: Array<[ListAnswer, RegExp]> = [
      [{ status: 200, type: JWT_TYPE, body: plainJwt }, /typ "JWT", not statuslist\+jwt/],
      [{ status: 200, type: JWT_TYPE, body: listToken(keys, { sub: `${url}/statuslists/2` }) }, /has sub/],
      [{ status: 200, type: JWT_TYPE, body: listToken(other, { sub: uri }) }, /does not verify: UNKNOWN_KEY/],
      [{ status: 200, type: 'application/json', body: good }, /content-type "application\/json"/],
      [{ status: 302, location: uri }, /no usable status list/],
    ];
    for (const [answer, why] of cases) {
      state.answer = () => answer;
      const verifier = createRemoteVerifier({ issuerUrl: url }, { audience: ANY_AUDIENCE, logger: silentLogger, cooldownMs: 0 });
      const refused = verifier.verify(token(keys, url, uri, 1));
      await expect(refused).rejects.toThrow(why);
      // What is wrong with the list, or with its fetch (a redirect refused), is the refusal's cause, with a code of its own.
      await expect(refused).rejects.toMatchObject({ cause: { name: 'JwtGrpcError', code: 'ERR_FETCH' } });
    }
    state.answer = () => ({ status: 200, type: JWT_TYPE, body: good });
    expect(
      await createRemoteVerifier({ issuerUrl: url }, { audience: ANY_AUDIENCE, logger: silentLogger }).verify(token(keys, url, uri, 1)),
    ).toMatchObject({ valid: true });
  });

  it('refuses an index outside the list and a malformed status claim (MALFORMED)', async () => {
    const keys = await generateKeys({ algorithms: ['ES256'] });
    const { url, uri, state } = await issuer(keys);
    state.answer = () => ({ status: 200, type: JWT_TYPE, body: listToken(keys, { sub: uri }) });
    const verifier = createRemoteVerifier({ issuerUrl: url }, { audience: ANY_AUDIENCE, logger: silentLogger });
    expect(await verifier.verify(token(keys, url, uri, 64))).toMatchObject({ valid: false, reason: 'MALFORMED' });
    const bad = createSigner(keys).sign('ES256', {
      sub: 'ada',
      iss: url,
      iat: now(),
      exp: now() + 600,
      status: { status_list: { idx: -1, uri } },
    }).token;
    expect(await verifier.verify(bad)).toMatchObject({ valid: false, reason: 'MALFORMED' });
  });

  it('keeps answering from a list past its ttl while the issuer is down, until its exp, then fails closed', async () => {
    const keys = await generateKeys({ algorithms: ['ES256'] });
    const { url, uri, state } = await issuer(keys);
    const iat = now();
    state.answer = () => ({ status: 200, type: JWT_TYPE, body: listToken(keys, { sub: uri, iat, ttl: 1, exp: iat + 3, revoked: [2] }) });
    const verifier = createRemoteVerifier({ issuerUrl: url }, { audience: ANY_AUDIENCE, logger: silentLogger });
    const kept = token(keys, url, uri, 1);
    expect(await verifier.verify(kept)).toMatchObject({ valid: true });
    expect(await verifier.verify(token(keys, url, uri, 2))).toMatchObject({ valid: false, reason: 'REVOKED' });
    state.answer = () => ({ status: 503 });
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const fetched = state.fetches;
    expect(await verifier.verify(kept)).toMatchObject({ valid: true });
    expect(state.fetches).toBe(fetched + 1);
    await new Promise((resolve) => setTimeout(resolve, (iat + 3) * 1000 - Date.now() + 100));
    await expect(verifier.verify(kept)).rejects.toMatchObject({ status: 14 });
  });

  it('keeps the last list through an outage of its server only until maxStaleMs, even before its exp, then fails closed, counting both', async () => {
    const keys = await generateKeys({ algorithms: ['ES256'] });
    const { url } = await issuer(keys);
    let body = '';
    const lists = createServer((_req, res) => res.writeHead(200, { 'content-type': JWT_TYPE }).end(body));
    servers.push(lists);
    await new Promise<void>((resolve) => lists.listen(0, '127.0.0.1', resolve));
    const listOrigin = `http://127.0.0.1:${(lists.address() as AddressInfo).port}`;
    const uri = `${listOrigin}/statuslists/1`;
    body = listToken(keys, { sub: uri, ttl: 1, exp: now() + 120, revoked: [2] });
    const registry = new Registry();
    const options: RemoteVerifierOptions = {
      audience: ANY_AUDIENCE,
      logger: silentLogger,
      maxStaleMs: 2_500,
      statusListOrigins: [listOrigin],
      metricsRegistry: registry,
    };
    const verifier = createRemoteVerifier({ issuerUrl: url }, options);
    const kept = token(keys, url, uri, 1);
    expect(await verifier.verify(kept)).toMatchObject({ valid: true });
    const fetchedAt = Date.now();
    lists.closeAllConnections();
    await new Promise((resolve) => lists.close(resolve));
    // Past its ttl: the refetch fails, and the last list answers, revocations included.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(await verifier.verify(kept)).toMatchObject({ valid: true });
    expect(await verifier.verify(token(keys, url, uri, 2))).toMatchObject({ valid: false, reason: 'REVOKED' });
    await new Promise((resolve) => setTimeout(resolve, fetchedAt + 2_600 - Date.now()));
    await verifier.refresh(); // the JWK Set's issuer is up: only the list is past maxStaleMs
    await expect(verifier.verify(kept)).rejects.toMatchObject({
      status: 14,
      details: expect.stringMatching(/^no usable status list .*past its exp or maxStaleMs \(2500 ms\)$/),
      cause: { code: 'ERR_FETCH' },
    });
    const metric = await registry.getSingleMetric('jwt_grpc_remote_fetch_failures_total')?.get();
    const count = (answer: string): number | undefined =>
      metric?.values.find(({ labels }) => labels['document'] === 'status_list' && labels['answer'] === answer)?.value;
    expect(count('last_good')).toBeGreaterThanOrEqual(1);
    expect(count('refused')).toBe(1);
  });
});
