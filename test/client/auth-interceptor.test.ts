/** jwtAuthInterceptor's own contract over TLS: metadata key, public methods, verifiers that fail, options. */
import {
  Server,
  type ServerErrorResponse,
  type ServerUnaryCall,
  type ServiceClientConstructor,
  type sendUnaryData,
  type ServiceError,
  credentials,
  loadPackageDefinition,
  status,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { describe, expect, it } from 'vitest';
import {
  ANY_AUDIENCE,
  JwtGrpcError,
  createJwtClient,
  createRemoteVerifier,
  createSigner,
  createVerifier,
  jwtAuthInterceptor,
  optionalVerifiedClaims,
  silentLogger,
  verifiedClaims,
} from '../../src/lib/index.js';
import { createHealthService } from '../../src/server/health.js';
import { addServiceToGrpcJs } from '../../src/transport/grpc-js.js';
import { HEALTH_PROTO } from '../../bench/kit/grpc-extras.js';
import {
  AS_LOCALHOST,
  certs,
  clientTls,
  failure,
  greeterClient,
  greeterDefinition,
  HELLO,
  keys,
  serverTls,
  startGreeter,
  useTlsFixture,
} from './harness.js';

useTlsFixture();

const now = (): number => Math.floor(Date.now() / 1000);
const goodToken = (): string => createSigner(keys).sign('ES256', { sub: 'ada', iat: now(), exp: now() + 600 }).token;

describe('jwtAuthInterceptor', () => {
  it('reads the token from another metadata key when told, and refuses two of them', async () => {
    const greeter = await startGreeter(certs, [
      jwtAuthInterceptor(createVerifier(keys, { audience: ANY_AUDIENCE }), { metadataKey: 'x-token' }),
    ]);
    const caller = greeterClient(greeter.target, clientTls(certs));
    expect((await caller.hello({ metadata: { 'x-token': `Bearer ${goodToken()}` } })).message).toBe('hello ada');
    const elsewhere = await failure(caller.hello({ metadata: { authorization: `Bearer ${goodToken()}` } }));
    expect([elsewhere.code, elsewhere.details]).toEqual([status.UNAUTHENTICATED, 'missing token']);
    // Two values travel as one header, joined with ", " (HTTP/2 field semantics): no longer one bearer token.
    const twice = await failure(caller.hello({ metadata: { 'x-token': [`Bearer ${goodToken()}`, `Bearer ${goodToken()}`] } }));
    expect([twice.code, twice.details]).toEqual([status.UNAUTHENTICATED, 'x-token is not "Bearer <token>"']);
  });

  it('ends the call UNAVAILABLE, not UNAUTHENTICATED, when a remote verifier never reached its issuer', async () => {
    const issuer = createJwtClient('127.0.0.1:1', { deadlineMs: 2000 });
    const greeter = await startGreeter(certs, [
      jwtAuthInterceptor(createRemoteVerifier(issuer, { audience: ANY_AUDIENCE, logger: silentLogger })),
    ]);
    try {
      const err = await failure(
        greeterClient(greeter.target, clientTls(certs)).hello({ metadata: { authorization: `Bearer ${goodToken()}` } }),
      );
      expect(err.code).toBe(status.UNAVAILABLE);
      expect(err.details).toContain('no JWK Set from issuer 127.0.0.1:1');
      expect(greeter.handled.count).toBe(0);
    } finally {
      issuer.close();
    }
  });

  it('ends the call INTERNAL, without the cause, when a verifier throws', async () => {
    const broken = {
      verify(): never {
        throw new Error('secret internals');
      },
    };
    const rejecting = { verify: () => Promise.reject(new Error('secret internals')) };
    for (const verifier of [broken, rejecting]) {
      const greeter = await startGreeter(certs, [jwtAuthInterceptor(verifier, { audience: ANY_AUDIENCE })]);
      const err = await failure(
        greeterClient(greeter.target, clientTls(certs)).hello({ metadata: { authorization: `Bearer ${goodToken()}` } }),
      );
      expect([err.code, err.details]).toEqual([status.INTERNAL, 'token verification failed']);
    }
  });

  it('lets gRPC health checks through by default, and nothing else', async () => {
    const health = createHealthService({ '': 'SERVING' });
    const server = new Server({ interceptors: [jwtAuthInterceptor(createVerifier(keys, { audience: ANY_AUDIENCE }))] });
    addServiceToGrpcJs(server, health.definition, health.implementation);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', serverTls(certs), (err, bound) => (err === null ? resolve(bound) : reject(err))),
    );
    const Health = (
      loadPackageDefinition(loadSync(HEALTH_PROTO, { enums: String })) as unknown as {
        grpc: { health: { v1: { Health: ServiceClientConstructor } } };
      }
    ).grpc.health.v1.Health;
    const client = new Health(`127.0.0.1:${port}`, clientTls(certs), AS_LOCALHOST);
    try {
      const reply = await new Promise<{ status: string }>((resolve, reject) =>
        (client as unknown as { Check: (...args: unknown[]) => unknown }).Check(
          { service: '' },
          (err: ServiceError | null, res: { status: string }) => (err === null ? resolve(res) : reject(err)),
        ),
      );
      expect(reply.status).toBe('SERVING');
    } finally {
      client.close();
      server.forceShutdown();
    }
    const greeter = await startGreeter(certs, [jwtAuthInterceptor(createVerifier(keys, { audience: ANY_AUDIENCE }))]);
    const err = await failure(greeterClient(greeter.target, credentials.createSsl(certs.caCert)).public());
    expect(err.code).toBe(status.UNAUTHENTICATED);
  });

  it('validates its options once, naming the bad one', () => {
    const verifier = createVerifier(keys, { audience: ANY_AUDIENCE });
    const cases: [string, () => unknown][] = [
      ['verifier', () => jwtAuthInterceptor({} as never)],
      ['publicMethods', () => jwtAuthInterceptor(verifier, { publicMethods: ['Hello'] })],
      ['publicMethods', () => jwtAuthInterceptor(verifier, { publicMethods: HELLO as never })],
      ['metadataKey', () => jwtAuthInterceptor(verifier, { metadataKey: 'Authorization' })],
      ['metadataKey', () => jwtAuthInterceptor(verifier, { metadataKey: 'token-bin' })],
      ['audience', () => jwtAuthInterceptor(verifier, { audience: '' })],
      ['unlistedMethods', () => jwtAuthInterceptor(verifier, { unlistedMethods: 'allow' as never })],
    ];
    for (const [field, make] of cases) {
      expect(make).toThrow(JwtGrpcError);
      expect(() => make()).toThrow(expect.objectContaining({ code: 'ERR_INVALID_OPTION', field }));
    }
  });

  it("checks an audience: its own, else the verifier's; with a verifier that has none, leaving it out throws", async () => {
    // A verifier of one's own, with no audience it would check.
    const own = {
      verify: (jwt: string, expect?: unknown) => createVerifier(keys, { audience: ANY_AUDIENCE }).verify(jwt, expect as never),
    };
    expect(() => jwtAuthInterceptor(own)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'audience', message: expect.stringContaining('ANY_AUDIENCE') }),
    );
    expect(() => jwtAuthInterceptor(own, { audience: undefined })).toThrow(expect.objectContaining({ field: 'audience' }));
    const signed = (aud: string): string => createSigner(keys).sign('ES256', { sub: 'svc', aud, iat: now(), exp: now() + 600 }).token;
    const hello = async (interceptor: ReturnType<typeof jwtAuthInterceptor>, aud: string): Promise<string> => {
      const greeter = await startGreeter(certs, [interceptor]);
      const caller = greeterClient(greeter.target, clientTls(certs));
      try {
        return (await caller.hello({ metadata: { authorization: `Bearer ${signed(aud)}` } })).message;
      } catch (err) {
        return `${(err as ServiceError).code} ${(err as ServiceError).details}`;
      }
    };
    const refused = `${status.UNAUTHENTICATED} AUDIENCE_MISMATCH: token aud does not contain the expected audience`;
    // The verifier's audience, the interceptor's over it, and one of one's own verifier.
    const byVerifier = jwtAuthInterceptor(createVerifier(keys, { audience: 'greeter' }));
    expect([await hello(byVerifier, 'greeter'), await hello(byVerifier, 'billing')]).toEqual(['hello svc', refused]);
    const byInterceptor = jwtAuthInterceptor(createVerifier(keys, { audience: ANY_AUDIENCE }), { audience: 'greeter' });
    expect([await hello(byInterceptor, 'greeter'), await hello(byInterceptor, 'billing')]).toEqual(['hello svc', refused]);
    const ownWithAudience = jwtAuthInterceptor(own, { audience: 'greeter' });
    expect([await hello(ownWithAudience, 'greeter'), await hello(ownWithAudience, 'billing')]).toEqual(['hello svc', refused]);
    // ANY_AUDIENCE, given on purpose: any audience passes.
    expect(await hello(jwtAuthInterceptor(own, { audience: ANY_AUDIENCE }), 'billing')).toBe('hello svc');
  });

  it('verifiedClaims fails closed: on a server without the interceptor, the call ends UNAUTHENTICATED, not OK', async () => {
    const server = new Server();
    let optional: unknown = 'not read';
    server.addService(greeterDefinition().service, {
      Hello(call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) {
        optional = optionalVerifiedClaims(call);
        try {
          callback(null, { message: `hello ${verifiedClaims(call).sub}` });
        } catch (err) {
          callback(err as ServerErrorResponse);
        }
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', serverTls(certs), (err, bound) => (err === null ? resolve(bound) : reject(err))),
    );
    try {
      const caller = greeterClient(`127.0.0.1:${port}`, clientTls(certs));
      const err = await failure(caller.hello());
      expect(err.code).toBe(status.UNAUTHENTICATED);
      expect(err.details).toMatch(/no verified token on this call/);
      expect(optional).toBeUndefined();
    } finally {
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    }
  });
});
