/**
 * One decision on every server jwtAuthInterceptor protects (src/protected-service/decide.ts): the
 * cases where its two transport copies once answered differently, over loopback, on
 * createJwtServer's two transports and on a grpc-js Server of one's own. Each case ends
 * the call with the same status and details everywhere, and never lets it through.
 */
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANY_AUDIENCE,
  CallMetadata,
  GrpcStatus,
  GrpcStatusError,
  type JwtAuthInterceptorOptions,
  type JwtClient,
  type KeySet,
  type TokenVerifier,
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

type Serve = (verifier: TokenVerifier, options: JwtAuthInterceptorOptions) => Promise<number>;

const onJwtServer =
  (transport: 'http2' | 'grpc-js'): Serve =>
  (verifier, options) =>
    trackServer(createJwtServer({ keys, transport, interceptors: [jwtAuthInterceptor(verifier, options)], logger: silentLogger })).listen(
      '127.0.0.1:0',
    );

const onGrpcJsServer: Serve = (verifier, options) => {
  const server = new Server({ interceptors: [jwtAuthInterceptor(verifier, options)] });
  addJwtService(server, { keys, logger: silentLogger });
  shutdowns.push(() => server.forceShutdown());
  return new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
  );
};

const SERVERS: Record<string, Serve> = {
  'createJwtServer http2': onJwtServer('http2'),
  'createJwtServer grpc-js': onJwtServer('grpc-js'),
  'a grpc-js Server': onGrpcJsServer,
};

const now = (): number => Math.floor(Date.now() / 1000);
const valid = (): TokenVerifier => createVerifier(keys, { audience: ANY_AUDIENCE });

/** GetJwks with a valid token and a deadline (a call left hanging fails as DEADLINE_EXCEEDED), settled to its status and details. */
async function call(port: number): Promise<{ status: number; details: string }> {
  const client = createJwtClient(`127.0.0.1:${port}`);
  clients.push(client);
  const token = createSigner(keys).sign('ES256', { sub: 'ada', iat: now(), exp: now() + 600 }).token;
  const metadata = new CallMetadata().set('authorization', `Bearer ${token}`);
  try {
    await client.getJwks({}, { metadata, deadlineMs: 3_000 });
    return { status: GrpcStatus.OK, details: 'served' };
  } catch (err) {
    return { status: (err as GrpcStatusError).status, details: (err as GrpcStatusError).details };
  }
}

const CASES: readonly { name: string; verifier: () => TokenVerifier; options?: JwtAuthInterceptorOptions; details: string }[] = [
  // createJwtServer once let the throw reach its transport: INTERNAL '<method>: internal error'.
  {
    name: 'an authorize hook that throws',
    verifier: valid,
    options: {
      authorize: () => {
        throw new Error('hook bug');
      },
    },
    details: 'authorization failed',
  },
  {
    name: 'an authorize hook that rejects',
    verifier: valid,
    options: { authorize: () => Promise.reject(new Error('hook down')) },
    details: 'authorization failed',
  },
  // A grpc-js Server once ended the call OK, its handler skipped; createJwtServer UNKNOWN.
  {
    name: 'an authorize hook that throws a status error of status OK',
    verifier: valid,
    options: {
      authorize: () => {
        throw new GrpcStatusError(GrpcStatus.OK, 'fine');
      },
    },
    details: 'authorization failed',
  },
  {
    name: 'a verifier that rejects with a status error of status OK',
    verifier: () => ({ audience: ANY_AUDIENCE, verify: () => Promise.reject(new GrpcStatusError(GrpcStatus.OK, 'fine')) }),
    details: 'token verification failed',
  },
  // A thenable whose then throws, and an answer that is no VerifyResult: once a throw out of the interceptor.
  {
    name: 'a verifier whose answer is a thenable that throws',
    verifier: () => ({
      audience: ANY_AUDIENCE,
      verify: () =>
        ({
          // biome-ignore lint/suspicious/noThenProperty: a broken thenable is the case under test
          then: () => {
            throw new Error('broken thenable');
          },
        }) as never,
    }),
    details: 'token verification failed',
  },
  {
    name: 'a verifier that answers no VerifyResult',
    verifier: () => ({ audience: ANY_AUDIENCE, verify: () => undefined as never }),
    details: 'token verification failed',
  },
  {
    name: 'a verifier that answers valid: "yes"',
    verifier: () => ({ audience: ANY_AUDIENCE, verify: () => ({ valid: 'yes' }) as never }),
    details: 'token verification failed',
  },
];

describe.each(Object.keys(SERVERS))('jwtAuthInterceptor on %s decides as everywhere', (kind) => {
  it.each(CASES)('$name: INTERNAL, $details', async ({ verifier, options, details }) => {
    const port = await (SERVERS[kind] as Serve)(verifier(), options ?? {});
    expect(await call(port)).toEqual({ status: GrpcStatus.INTERNAL, details });
  });

  it('a verifier that rejects with a status error keeps its status (an unreachable issuer: UNAVAILABLE)', async () => {
    const down: TokenVerifier = {
      audience: ANY_AUDIENCE,
      verify: () => Promise.reject(new GrpcStatusError(GrpcStatus.UNAVAILABLE, 'no JWK Set from issuer x')),
    };
    expect(await call(await (SERVERS[kind] as Serve)(down, {}))).toEqual({
      status: GrpcStatus.UNAVAILABLE,
      details: 'no JWK Set from issuer x',
    });
  });
});
