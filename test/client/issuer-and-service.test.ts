/**
 * The issuer and a protected service on one server: jwtAuthInterceptor guards every method
 * of the server, JwtService's included, so without JWT_SERVICE_METHODS public a caller
 * would need a token to get one. Over TLS on loopback, on a grpc-js Server of one's own
 * (addJwtService) and on createJwtServer's two transports.
 */
import { Server, credentials } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  GrpcStatus,
  HEALTH_METHODS,
  JWT_SERVICE_METHODS,
  type JwtAuthInterceptorOptions,
  SERVICE_NAME,
  addJwtService,
  createVerifier,
  jwtAuthInterceptor,
  jwtCallCredentials,
  silentLogger,
} from '../../src/lib/index.js';
import { jwtServiceDefinition } from '../../src/jwt-service/definition.js';
import {
  certs,
  clientTls,
  failure,
  greeterClient,
  greeterDefinition,
  HELLO,
  issuerClient,
  keys,
  serverTls,
  startIssuer,
  useTlsFixture,
} from './harness.js';

useTlsFixture();

const ISSUER_PUBLIC = [...HEALTH_METHODS, ...JWT_SERVICE_METHODS];

/** A grpc-js Server of one's own: JwtService and the Greeter side by side, behind the interceptor. */
async function combined(options: JwtAuthInterceptorOptions): Promise<{ target: string; close: () => void }> {
  const server = new Server({ interceptors: [jwtAuthInterceptor(createVerifier(keys, { audience: 'greeter' }), options)] });
  addJwtService(server, { keys, logger: silentLogger });
  server.addService(greeterDefinition().service, {
    Hello: (_call: unknown, callback: (err: null, reply: { message: string; claims_json: string }) => void) =>
      callback(null, { message: 'hello', claims_json: '' }),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', serverTls(certs), (err, bound) => (err === null ? resolve(bound) : reject(err))),
  );
  return { target: `127.0.0.1:${port}`, close: () => server.forceShutdown() };
}

describe('the issuer and a protected service on one server', () => {
  it('JWT_SERVICE_METHODS are the paths JwtService serves', () => {
    expect([...JWT_SERVICE_METHODS].sort()).toEqual(
      Object.values(jwtServiceDefinition())
        .map((method) => method.path)
        .sort(),
    );
    expect(JWT_SERVICE_METHODS.every((path) => path.startsWith(`/${SERVICE_NAME}/`))).toBe(true);
    expect(Object.isFrozen(JWT_SERVICE_METHODS) && Object.isFrozen(HEALTH_METHODS)).toBe(true);
  });

  it('on a grpc-js Server: callers get keys and tokens without one, and the Greeter only with one', async () => {
    const server = await combined({ publicMethods: ISSUER_PUBLIC, methods: { [HELLO]: { scopes: ['greet'] } } });
    try {
      const jwt = issuerClient(certs, server.target);
      expect((await jwt.getJwks()).jwks_json).toContain('"keys"');
      const auth = jwtCallCredentials(jwt, {
        algorithm: 'ES256',
        subject: 'svc-orders',
        audience: 'greeter',
        claims: { scope: 'greet' },
        logger: silentLogger,
      });
      const caller = greeterClient(server.target, credentials.combineChannelCredentials(clientTls(certs), auth));
      expect((await caller.hello()).message).toBe('hello');
      const anonymous = await failure(greeterClient(server.target, clientTls(certs)).hello());
      expect([anonymous.code, anonymous.details]).toEqual([GrpcStatus.UNAUTHENTICATED, 'missing token']);
    } finally {
      server.close();
    }
  });

  it('without them public, the interceptor locks callers out of the issuer (what the preset is for)', async () => {
    const server = await combined({});
    try {
      const jwt = issuerClient(certs, server.target);
      await expect(jwt.getJwks()).rejects.toMatchObject({ status: GrpcStatus.UNAUTHENTICATED, details: 'missing token' });
      await expect(jwt.generateJwt({ algorithm: 'ES256', subject: 'svc', audience: 'greeter' })).rejects.toMatchObject({
        status: GrpcStatus.UNAUTHENTICATED,
      });
    } finally {
      server.close();
    }
  });

  it.each(['http2', 'grpc-js'] as const)('on createJwtServer (%s): JwtService stays open to callers without a token', async (transport) => {
    const interceptor = jwtAuthInterceptor(createVerifier(keys, { audience: 'greeter' }), { publicMethods: ISSUER_PUBLIC });
    const issuer = await startIssuer(certs, { keys, transport, interceptors: [interceptor] });
    const jwt = issuerClient(certs, issuer.target);
    expect((await jwt.getJwks()).jwks_json).toContain('"keys"');
    const { jwt: token } = await jwt.generateJwt({ algorithm: 'ES256', subject: 'svc', audience: 'greeter' });
    expect((await jwt.verifyJwt({ jwt: token, audience: 'greeter' })).valid).toBe(true);
  });
});
