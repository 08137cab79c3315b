/**
 * Token exchange (RFC 8693) over real connections on loopback, driven by clients nobody here
 * wrote: openid-client's generic grant and oauth4webapi against POST /token, jose verifying
 * what was issued against the server's JWK Set. A second, independent issuer runs in the
 * test, shaped as a Kubernetes API server (its own RSA keys, discovery document and
 * /openid/v1/jwks, service-account tokens with the kubernetes.io claim); the server trusts
 * it and its own tokens through a trust file, under a policy with exchange rules.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CryptoKey, SignJWT, createRemoteJWKSet, exportJWK, generateKeyPair, importJWK, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import * as openid from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallMetadata, GrpcStatus, type JwtServer, createJwtServer, exportKeys, silentLogger } from '../../src/lib/index.js';
import { ClientPool, callError } from '../../bench/kit/grpc-clients.js';
import { closeAllServers, nowSeconds, sharedKeys, trackServer } from '../../bench/kit/jwt-servers.js';
import { freePort } from '../../bench/kit/ports.js';

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const ADMIN_SECRET = 'an-admin-secret-of-the-test';

const clients = new ClientPool();
const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-exchange-'));

/** The Kubernetes-shaped issuer: its discovery document and JWK Set, and how often each was fetched. */
interface Cluster {
  readonly issuer: string;
  readonly fetches: { configuration: number; jwks: number };
  serviceAccountToken(namespace: string, name: string, options?: { exp?: number; audience?: string }): Promise<string>;
  close(): Promise<void>;
}

async function startCluster(): Promise<Cluster> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'sa-key-1', alg: 'RS256', use: 'sig' };
  const fetches = { configuration: 0, jwks: 0 };
  let issuer = '';
  const server: Server = createServer((request, response) => {
    if (request.url === '/.well-known/openid-configuration') {
      fetches.configuration += 1;
      // The shape of a kube-apiserver's document (--service-account-issuer, --service-account-jwks-uri).
      const document = {
        issuer,
        jwks_uri: `${issuer}/openid/v1/jwks`,
        response_types_supported: ['id_token'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
      };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document));
    } else if (request.url === '/openid/v1/jwks') {
      fetches.jwks += 1;
      response.writeHead(200, { 'content-type': 'application/jwk-set+json' }).end(JSON.stringify({ keys: [jwk] }));
    } else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    fetches,
    serviceAccountToken: (namespace, name, { exp = nowSeconds() + 3600, audience = 'jwt-grpc' } = {}) =>
      // A projected service-account token as the kubelet gets it (TokenRequest API).
      new SignJWT({
        'kubernetes.io': { namespace, serviceaccount: { name, uid: `uid-${name}` }, pod: { name: `${name}-7d4b9`, uid: 'pod-uid' } },
      })
        .setProtectedHeader({ alg: 'RS256', kid: 'sa-key-1' })
        .setIssuer(issuer)
        .setSubject(`system:serviceaccount:${namespace}:${name}`)
        .setAudience([audience])
        .setIssuedAt()
        .setNotBefore(nowSeconds() - 1)
        .setExpirationTime(exp)
        .sign(privateKey),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let cluster: Cluster;
let server: JwtServer;
let issuer: string;
let grpcPort: number;
let ownKey: { key: CryptoKey | Uint8Array; kid: string };

/** A token this server's own ES256 key signs, as GenerateJwt would (the policy here names no GenerateJwt caller). */
async function ownToken(claims: Record<string, unknown>, exp = nowSeconds() + 3600): Promise<string> {
  return new SignJWT({ jti: `jti-${Math.random()}`, ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: ownKey.kid })
    .setIssuer(issuer)
    .setIssuedAt()
    .setExpirationTime(exp)
    .sign(ownKey.key);
}

beforeAll(async () => {
  cluster = await startCluster();
  const keys = await sharedKeys();
  const es256 = exportKeys(keys, { includePrivate: true }).keys.find((key) => key.alg === 'ES256');
  if (es256 === undefined) throw new Error('the shared keys have no ES256 key');
  ownKey = { key: await importJWK(es256, 'ES256'), kid: es256.kid };
  const trustFile = join(dir, 'trust.json');
  writeFileSync(
    trustFile,
    JSON.stringify({
      self: { audiences: ['orders', 'billing'], claims: ['tenant'] },
      issuers: {
        [cluster.issuer]: {
          audiences: ['jwt-grpc'],
          subject: 'k8s:{kubernetes.io/namespace}/{kubernetes.io/serviceaccount/name}',
          maxTtlSeconds: 600,
        },
      },
      algorithm: 'ES256',
    }),
  );
  const adminTokenFile = join(dir, 'admin');
  writeFileSync(adminTokenFile, ADMIN_SECRET);
  const httpPort = await freePort();
  issuer = `http://127.0.0.1:${httpPort}`;
  server = trackServer(
    createJwtServer({
      keys,
      issuer,
      httpPort,
      trustFile,
      adminTokenFile,
      logger: silentLogger,
      policy: {
        callers: {},
        exchange: [
          // A pod of namespace shop trades its own service-account token.
          { subjects: ['k8s:shop/*'], audiences: ['billing', 'https://billing.example/api'] },
          // The services of shop call on behalf of a user, for invoices only.
          { subjects: ['alice'], actors: ['k8s:shop/*'], audiences: ['billing', 'ledger'], scopes: ['invoices:*'] },
        ],
      },
    }),
  );
  grpcPort = await server.listen('127.0.0.1:0');
});

afterAll(async () => {
  clients.closeAll();
  await closeAllServers();
  await cluster?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** jose's verdict on an issued token, with this server's JWK Set and issuer. */
async function verified(token: string, audience: string) {
  const jwks = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`));
  return (await jwtVerify(token, jwks, { issuer, audience, algorithms: ['ES256'] })).payload;
}

/** openid-client, configured by discovery of the server, as a public client. */
async function openidConfig(): Promise<openid.Configuration> {
  return openid.discovery(new URL(issuer), 'shop-client', undefined, openid.None(), { execute: [openid.allowInsecureRequests] });
}

/** oauth4webapi: the metadata by discovery, then a generic grant with the parameters given. */
async function oauthExchange(parameters: Record<string, string>): Promise<oauth.TokenEndpointResponse> {
  const options = { [oauth.allowInsecureRequests]: true };
  const as = await oauth.processDiscoveryResponse(new URL(issuer), await oauth.discoveryRequest(new URL(issuer), options));
  const client: oauth.Client = { client_id: 'shop-client' };
  const response = await oauth.genericTokenEndpointRequest(as, client, oauth.None(), GRANT, parameters, options);
  return oauth.processGenericTokenEndpointResponse(as, client, response);
}

/** A raw POST /token: the status, headers and JSON body. */
async function post(body: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body,
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

describe('the token endpoint, with openid-client and oauth4webapi', () => {
  it('is announced in the discovery document with its one grant type', async () => {
    const config = await openidConfig();
    const metadata = config.serverMetadata();
    expect(metadata.token_endpoint).toBe(`${issuer}/token`);
    expect(metadata.grant_types_supported).toEqual([GRANT]);
  });

  it('openid-client trades a Kubernetes service-account token for one of ours, for the audience asked, no longer than the trust allows', async () => {
    const saToken = await cluster.serviceAccountToken('shop', 'orders');
    const config = await openidConfig();
    const answer = await openid.genericGrantRequest(config, GRANT, {
      subject_token: saToken,
      subject_token_type: JWT_TYPE,
      audience: 'billing',
    });
    expect(answer.token_type.toLowerCase()).toBe('bearer');
    expect(answer['issued_token_type']).toBe(ACCESS_TOKEN_TYPE);
    expect(answer.expires_in).toBeLessThanOrEqual(600);
    const payload = await verified(answer.access_token, 'billing');
    expect(payload.sub).toBe('k8s:shop/orders');
    expect(payload.aud).toBe('billing');
    expect(payload.act).toBeUndefined();
    expect((payload.exp as number) - (payload.iat as number)).toBe(600);
  });

  it('oauth4webapi exchanges our own token on behalf of its user, narrowed, with act nested over two hops', async () => {
    const userToken = await ownToken({ sub: 'alice', aud: 'orders', scope: 'invoices:read invoices:write profile', tenant: 't-42' });
    const ordersActor = await cluster.serviceAccountToken('shop', 'orders');
    const first = await oauthExchange({
      subject_token: userToken,
      subject_token_type: ACCESS_TOKEN_TYPE,
      actor_token: ordersActor,
      actor_token_type: JWT_TYPE,
      audience: 'billing',
      scope: 'invoices:read',
    });
    // The scope asked is the scope issued: RFC 8693 section 2.2.1 leaves it out of the answer.
    expect(first.scope).toBeUndefined();
    const hop1 = await verified(first.access_token, 'billing');
    expect(hop1).toMatchObject({
      sub: 'alice',
      scope: 'invoices:read',
      tenant: 't-42',
      act: { sub: 'k8s:shop/orders', iss: cluster.issuer },
    });

    // billing calls ledger with what it was called with: the chain grows, the scope stays.
    const second = await oauthExchange({
      subject_token: first.access_token,
      subject_token_type: JWT_TYPE,
      actor_token: await cluster.serviceAccountToken('shop', 'billing'),
      actor_token_type: JWT_TYPE,
      audience: 'ledger',
    });
    expect(second.scope).toBe('invoices:read');
    const hop2 = await verified(second.access_token, 'ledger');
    expect(hop2.act).toEqual({ sub: 'k8s:shop/billing', iss: cluster.issuer, act: { sub: 'k8s:shop/orders', iss: cluster.issuer } });
    // Never longer than the subject token it came from.
    expect(hop2.exp as number).toBeLessThanOrEqual(hop1.exp as number);
  });

  it('fetched the other issuer once by discovery, and its keys once: no exchange waits on the network once warm', () => {
    expect(cluster.fetches).toEqual({ configuration: 1, jwks: 1 });
  });

  it('answers each error of RFC 8693 and RFC 6749 with its status', async () => {
    const saToken = await cluster.serviceAccountToken('shop', 'orders');
    const form = (fields: Record<string, string>) =>
      new URLSearchParams({ grant_type: GRANT, subject_token_type: JWT_TYPE, ...fields }).toString();
    const error = async (body: string, headers?: Record<string, string>) => {
      const answer = await post(body, headers);
      expect(answer.headers.get('cache-control')).toBe('no-store');
      return [answer.status, answer.body['error']];
    };
    // unsupported_grant_type, through openid-client: its error carries the server's code.
    const config = await openidConfig();
    await expect(openid.genericGrantRequest(config, 'client_credentials', {})).rejects.toMatchObject({
      error: 'unsupported_grant_type',
      status: 400,
    });
    // invalid_client: a client that authenticates, where none is.
    expect(await error(form({ subject_token: saToken, audience: 'billing' }), { authorization: 'Basic c2hvcDpzZWNyZXQ=' })).toEqual([
      401,
      'invalid_client',
    ]);
    // invalid_request: a token whose signature does not verify.
    const forged = `${saToken.slice(0, saToken.lastIndexOf('.') + 1)}${'A'.repeat(342)}`;
    expect(await error(form({ subject_token: forged, audience: 'billing' }))).toEqual([400, 'invalid_request']);
    // invalid_request: refused by the policy (no rule for namespace other).
    expect(await error(form({ subject_token: await cluster.serviceAccountToken('other', 'x'), audience: 'billing' }))).toEqual([
      400,
      'invalid_request',
    ]);
    // invalid_target: an audience no rule allows.
    expect(await error(form({ subject_token: saToken, audience: 'payroll' }))).toEqual([400, 'invalid_target']);
    // invalid_scope: wider than the subject token.
    const actor = await cluster.serviceAccountToken('shop', 'orders');
    const user = await ownToken({ sub: 'alice', aud: 'orders', scope: 'invoices:read' });
    expect(
      await error(
        form({ subject_token: user, actor_token: actor, actor_token_type: JWT_TYPE, audience: 'billing', scope: 'invoices:write' }),
      ),
    ).toEqual([400, 'invalid_scope']);
  });

  it('refuses an expired token, a revoked one of ours, and an actor the subject token does not name in may_act', async () => {
    const expired = await cluster.serviceAccountToken('shop', 'orders', { exp: nowSeconds() - 60 });
    await expect(oauthExchange({ subject_token: expired, subject_token_type: JWT_TYPE, audience: 'billing' })).rejects.toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringContaining('EXPIRED'),
    });
    const actor = await cluster.serviceAccountToken('shop', 'orders');
    const user = await ownToken({ sub: 'alice', aud: 'orders', scope: 'invoices:read' });
    const admin = new CallMetadata().set('authorization', `Bearer ${ADMIN_SECRET}`);
    await clients.jwt(grpcPort).revokeJwt({ jwt: user }, { metadata: admin });
    await expect(
      oauthExchange({
        subject_token: user,
        subject_token_type: JWT_TYPE,
        actor_token: actor,
        actor_token_type: JWT_TYPE,
        audience: 'billing',
      }),
    ).rejects.toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('REVOKED') });
    const guarded = await ownToken({ sub: 'alice', aud: 'orders', scope: 'invoices:read', may_act: { sub: 'k8s:shop/billing' } });
    await expect(
      oauthExchange({
        subject_token: guarded,
        subject_token_type: JWT_TYPE,
        actor_token: actor,
        actor_token_type: JWT_TYPE,
        audience: 'billing',
      }),
    ).rejects.toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('may_act') });
  });
});

describe('the ExchangeToken RPC', () => {
  it('exchanges as the token endpoint does, and answers its refusals with gRPC statuses', async () => {
    const grpc = clients.jwt(grpcPort);
    const saToken = await cluster.serviceAccountToken('shop', 'orders');
    const answer = await grpc.exchangeToken({
      subject_token: saToken,
      subject_token_type: JWT_TYPE,
      resource: 'https://billing.example/api',
    });
    expect(answer).toMatchObject({ issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'Bearer', expires_in: 600, scope: '' });
    expect(await verified(answer.access_token, 'https://billing.example/api')).toMatchObject({ sub: 'k8s:shop/orders' });
    const refused = async (request: Parameters<typeof grpc.exchangeToken>[0]) => (await callError(grpc.exchangeToken(request))).code;
    expect(await refused({ subject_token_type: JWT_TYPE, audience: 'billing' })).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(await refused({ subject_token: `${saToken}x`, subject_token_type: JWT_TYPE, audience: 'billing' })).toBe(
      GrpcStatus.UNAUTHENTICATED,
    );
    expect(await refused({ subject_token: saToken, subject_token_type: JWT_TYPE, audience: 'payroll' })).toBe(GrpcStatus.PERMISSION_DENIED);
  });
});

describe('the token endpoint under attack', () => {
  it('refuses a body over its bound, declared or streamed, unread, while a legitimate exchange beside it is answered', async () => {
    const { request } = await import('node:http');
    const url = new URL(`${issuer}/token`);
    const oversized = (declared: boolean) =>
      new Promise<number>((resolve, reject) => {
        const call = request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', ...(declared && { 'content-length': String(1 << 30) }) },
          },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        call.on('error', reject);
        // The attacker keeps sending: 64 KiB chunks, far past the 20 KiB bound, never ending the body.
        const chunk = Buffer.alloc(64 * 1024, 'a');
        const timer = setInterval(() => call.write(chunk, () => undefined), 5);
        call.on('close', () => clearInterval(timer));
        call.on('response', () => setTimeout(() => call.destroy(), 50));
      });
    const saToken = await cluster.serviceAccountToken('shop', 'orders');
    const [declared, streamed, legitimate] = await Promise.all([
      oversized(true),
      oversized(false),
      oauthExchange({ subject_token: saToken, subject_token_type: JWT_TYPE, audience: 'billing' }),
    ]);
    expect([declared, streamed]).toEqual([413, 413]);
    expect(legitimate.access_token.split('.')).toHaveLength(3);
  });
});
