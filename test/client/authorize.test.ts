/**
 * jwtAuthInterceptor authorizes as well as authenticates: per-method rules (scopes,
 * subjects, client ids) and an authorize hook answer PERMISSION_DENIED; a missing or
 * invalid token stays UNAUTHENTICATED. On createJwtServer (both transports) and a grpc-js
 * Server of one's own, over loopback.
 */
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANY_AUDIENCE,
  CallMetadata,
  GrpcStatus,
  type JwtAuthInterceptorOptions,
  type JwtClient,
  type KeySet,
  addJwtService,
  createJwtClient,
  createJwtServer,
  createSigner,
  createVerifier,
  generateKeys,
  jwtAuthInterceptor,
  silentLogger,
} from '../../src/lib/index.js';
import { closeAllServers, trackServer } from '../../bench/kit/jwt-servers.js';

const GET_JWKS = '/jwt.services.JwtService/GetJwks';
const VERIFY = '/jwt.services.JwtService/VerifyJwt';

describe('jwtAuthInterceptor authorization', () => {
  let keys: KeySet;
  const clients: JwtClient[] = [];
  const shutdowns: (() => void)[] = [];

  beforeAll(async () => {
    keys = await generateKeys({ algorithms: ['ES256'] });
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    for (const shutdown of shutdowns) shutdown();
    await closeAllServers();
  });

  const now = (): number => Math.floor(Date.now() / 1000);
  const token = (claims: Record<string, unknown>): string =>
    createSigner(keys).sign('ES256', { iat: now(), exp: now() + 600, ...claims }).token;
  const bearer = (claims: Record<string, unknown>) => ({ metadata: new CallMetadata().set('authorization', `Bearer ${token(claims)}`) });

  const servers = {
    http2: (options: JwtAuthInterceptorOptions) => onJwtServer('http2', options),
    'grpc-js': (options: JwtAuthInterceptorOptions) => onJwtServer('grpc-js', options),
    'a grpc-js Server of its own': async (options: JwtAuthInterceptorOptions): Promise<number> => {
      const server = new Server({ interceptors: [jwtAuthInterceptor(createVerifier(keys, { audience: ANY_AUDIENCE }), options)] });
      addJwtService(server, { keys, logger: silentLogger });
      shutdowns.push(() => server.forceShutdown());
      return new Promise((resolve, reject) =>
        server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
      );
    },
  };
  function onJwtServer(transport: 'http2' | 'grpc-js', options: JwtAuthInterceptorOptions): Promise<number> {
    const server = trackServer(
      createJwtServer({
        keys,
        transport,
        interceptors: [jwtAuthInterceptor(createVerifier(keys, { audience: ANY_AUDIENCE }), options)],
        logger: silentLogger,
      }),
    );
    return server.listen('127.0.0.1:0');
  }
  const client = (port: number): JwtClient => {
    const made = createJwtClient(`127.0.0.1:${port}`);
    clients.push(made);
    return made;
  };

  describe.each(Object.keys(servers) as (keyof typeof servers)[])('on %s', (kind) => {
    it('per-method rules: a missing scope, another subject or client_id is PERMISSION_DENIED; no token stays UNAUTHENTICATED', async () => {
      const jwt = client(
        await servers[kind]({
          methods: {
            [GET_JWKS]: { scopes: ['jwks:read'], clientIds: ['spiffe://example.org/ns/shop/sa/orders'] },
            [VERIFY]: { subjects: ['svc-orders'] },
          },
        }),
      );
      const orders = { sub: 'svc-orders', client_id: 'spiffe://example.org/ns/shop/sa/orders' };
      expect((await jwt.getJwks({}, bearer({ ...orders, scope: 'other jwks:read' }))).jwks_json).toContain('keys');
      await expect(jwt.getJwks({}, bearer({ ...orders, scope: 'other' }))).rejects.toMatchObject({
        status: GrpcStatus.PERMISSION_DENIED,
        details: `${GET_JWKS}: the token lacks scope "jwks:read"`,
      });
      await expect(jwt.getJwks({}, bearer({ ...orders, client_id: 'dns:x', scope: 'jwks:read' }))).rejects.toMatchObject({
        status: GrpcStatus.PERMISSION_DENIED,
        details: expect.stringContaining('client_id "dns:x" may not call it'),
      });
      await expect(jwt.verifyJwt({ jwt: 'x' }, bearer({ sub: 'svc-other' }))).rejects.toMatchObject({
        status: GrpcStatus.PERMISSION_DENIED,
      });
      expect(await jwt.verifyJwt({ jwt: 'x' }, bearer({ sub: 'svc-orders' }))).toMatchObject({ valid: false });
      await expect(jwt.getJwks()).rejects.toMatchObject({ status: GrpcStatus.UNAUTHENTICATED });
    });

    it('once methods names a rule, a method without one is PERMISSION_DENIED; unlistedMethods can let any valid token in', async () => {
      const denying = client(await servers[kind]({ methods: { [GET_JWKS]: {} } }));
      expect((await denying.getJwks({}, bearer({ sub: 'ada' }))).jwks_json).toContain('keys');
      await expect(denying.verifyJwt({ jwt: 'x' }, bearer({ sub: 'ada' }))).rejects.toMatchObject({
        status: GrpcStatus.PERMISSION_DENIED,
        details: `${VERIFY}: no rule in methods names it, and unlistedMethods is 'deny'`,
      });
      await expect(denying.verifyJwt({ jwt: 'x' })).rejects.toMatchObject({ status: GrpcStatus.UNAUTHENTICATED });
      const allowing = client(
        await servers[kind]({ methods: { [GET_JWKS]: { scopes: ['jwks:read'] } }, unlistedMethods: 'allow-any-valid-token' }),
      );
      expect(await allowing.verifyJwt({ jwt: 'x' }, bearer({ sub: 'ada' }))).toMatchObject({ valid: false });
      await expect(allowing.getJwks({}, bearer({ sub: 'ada' }))).rejects.toMatchObject({ status: GrpcStatus.PERMISSION_DENIED });
      // 'deny' without rules: only public methods are reachable.
      const closed = client(await servers[kind]({ unlistedMethods: 'deny' }));
      await expect(closed.getJwks({}, bearer({ sub: 'ada' }))).rejects.toMatchObject({ status: GrpcStatus.PERMISSION_DENIED });
    });

    it('a rule for a misspelt method leaves the real one refused, not open to any valid token', async () => {
      const misspelt = { methods: { '/jwt.services.JwtService/GetJwk': { scopes: ['jwks:read'] } } };
      if (kind === 'a grpc-js Server of its own') {
        // grpc-js does not tell an interceptor what the server serves: the default deny is what closes this.
        const jwt = client(await servers[kind](misspelt));
        await expect(jwt.getJwks({}, bearer({ sub: 'ada' }))).rejects.toMatchObject({ status: GrpcStatus.PERMISSION_DENIED });
      } else {
        await expect(servers[kind](misspelt)).rejects.toMatchObject({
          code: 'ERR_INVALID_OPTION',
          field: 'methods["/jwt.services.JwtService/GetJwk"]',
          message: expect.stringContaining(
            'names no method this server serves (the nearest served method is "/jwt.services.JwtService/GetJwks")',
          ),
        });
        await expect(servers[kind]({ publicMethods: ['/grpc.health.v1.Health/Chek'] })).rejects.toMatchObject({
          code: 'ERR_INVALID_OPTION',
          field: 'publicMethods',
          message: expect.stringContaining('"/grpc.health.v1.Health/Check"'),
        });
      }
    });

    it('an authorize hook: true lets a call in, false is PERMISSION_DENIED, async answers too', async () => {
      const seen: string[] = [];
      const jwt = client(
        await servers[kind]({
          authorize: async (claims, call) => {
            seen.push(call.method);
            return claims.sub === 'admin';
          },
        }),
      );
      expect((await jwt.getJwks({}, bearer({ sub: 'admin' }))).jwks_json).toContain('keys');
      await expect(jwt.getJwks({}, bearer({ sub: 'ada' }))).rejects.toMatchObject({
        status: GrpcStatus.PERMISSION_DENIED,
        details: `${GET_JWKS}: not authorized`,
      });
      expect(seen).toEqual([GET_JWKS, GET_JWKS]);
    });
  });

  it('refuses rules that are not rules, naming them', () => {
    expect(() => jwtAuthInterceptor(createVerifier(keys, { audience: ANY_AUDIENCE }), { methods: { GetJwks: {} } })).toThrow(
      /methods: "GetJwks" is not a full method path/,
    );
    expect(() =>
      jwtAuthInterceptor(createVerifier(keys, { audience: ANY_AUDIENCE }), { methods: { [GET_JWKS]: { scope: ['a'] } as never } }),
    ).toThrow(/scope: is not an option of a method rule; did you mean methods\["[^"]+"\]\.scopes\?/);
  });
});
