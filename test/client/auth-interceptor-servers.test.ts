/**
 * One jwtAuthInterceptor value protects createJwtServer, on either transport, as it protects
 * a grpc-js `new Server({ interceptors })` (auth-interceptor.test.ts): over loopback, through
 * the public API only.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ANY_AUDIENCE,
  type CallContext,
  type JwtServer,
  type KeySet,
  CallMetadata,
  type CallInterceptor,
  GrpcStatus,
  createJwtClient,
  createJwtServer,
  createSigner,
  createVerifier,
  generateKeys,
  jwtAuthInterceptor,
  silentLogger,
  verifiedClaims,
} from '../../src/lib/index.js';

let keys: KeySet;
const servers: JwtServer[] = [];

beforeAll(async () => {
  keys = await generateKeys({ algorithms: ['ES256'] });
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close({ graceMs: 0 })));
});

const now = (): number => Math.floor(Date.now() / 1000);
const token = (exp: number): string => createSigner(keys).sign('ES256', { sub: 'ada', iat: now() - 10, exp }).token;

const bearer = (value: string): CallMetadata => new CallMetadata().set('authorization', `Bearer ${value}`);

async function serve(transport: 'http2' | 'grpc-js', interceptors: readonly CallInterceptor[]): Promise<string> {
  // Type-checks as it stands: the interceptor is this package's kind as well as grpc-js's.
  const server = createJwtServer({ keys, transport, interceptors, logger: silentLogger });
  servers.push(server);
  return `127.0.0.1:${await server.listen('127.0.0.1:0')}`;
}

describe.each(['http2', 'grpc-js'] as const)('jwtAuthInterceptor on createJwtServer, transport %s', (transport) => {
  it('refuses a call without a token and with an expired one UNAUTHENTICATED, and serves a valid one', async () => {
    const seen: unknown[] = [];
    const afterAuth: CallInterceptor = { onCallStart: (call: CallContext) => void seen.push(verifiedClaims(call)?.sub) };
    const client = createJwtClient(
      await serve(transport, [jwtAuthInterceptor(createVerifier(keys, { audience: ANY_AUDIENCE })), afterAuth]),
    );
    try {
      await expect(client.getJwks()).rejects.toMatchObject({ status: GrpcStatus.UNAUTHENTICATED, details: 'missing token' });
      await expect(client.getJwks({}, { metadata: bearer(token(now() - 60)) })).rejects.toMatchObject({
        status: GrpcStatus.UNAUTHENTICATED,
        details: expect.stringMatching(/^EXPIRED: /),
      });
      expect(seen).toEqual([]);
      const jwks = await client.getJwks({}, { metadata: bearer(token(now() + 600)) });
      expect(JSON.parse(jwks.jwks_json).keys.length).toBeGreaterThan(0);
      // The claims it verified reach what runs after it, keyed by the call's own metadata.
      expect(seen).toEqual(['ada']);
    } finally {
      client.close();
    }
  });

  it('answers an async verifier that fails with its status, the call not reaching the service', async () => {
    const failing = { verify: () => Promise.reject(new Error('verifier down')) };
    const client = createJwtClient(await serve(transport, [jwtAuthInterceptor(failing, { audience: ANY_AUDIENCE })]));
    try {
      await expect(client.getJwks({}, { metadata: bearer(token(now() + 600)) })).rejects.toMatchObject({
        status: GrpcStatus.INTERNAL,
        details: 'token verification failed',
      });
    } finally {
      client.close();
    }
  });
});

describe('interceptors of createJwtServer', () => {
  it('refuses a grpc-js interceptor without hooks, which would protect nothing (fails closed)', () => {
    const grpcJsOnly = (() => undefined) as unknown as CallInterceptor;
    expect(() => createJwtServer({ keys, interceptors: [grpcJsOnly] })).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: 'interceptors',
        message: expect.stringContaining('grpc-js interceptor'),
      }),
    );
  });
});
