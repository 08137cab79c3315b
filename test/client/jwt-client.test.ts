/** createJwtClient against real servers on loopback: typed calls, typed errors, deadlines, closing, load balancing. */
import {
  Metadata as GrpcMetadata,
  Server,
  ServerCredentials,
  type ServiceClientConstructor,
  loadPackageDefinition,
  status,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  GrpcStatusError,
  JwtGrpcError,
  type KeySet,
  CallMetadata,
  PROTO_PATH,
  GrpcStatus,
  createJwtClient,
  generateKeys,
} from '../../src/lib/index.js';
import { closeAllServers, startIssuer } from '../../bench/kit/jwt-servers.js';

let keys: KeySet;
const closers: (() => unknown)[] = [];

beforeAll(async () => {
  keys = await generateKeys({ algorithms: ['ES256', 'HS256'] });
});
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
  await closeAllServers(500);
});

/** The issuer of these tests, named `issuer`. */
const startIssuerOf = (issuer = 'https://issuer.test'): ReturnType<typeof startIssuer> => startIssuer({ keys, issuer });

/** A JwtService that never answers GenerateJwt and fails VerifyJwt with a trailer: what the client does with both. */
async function startOddServer(): Promise<number> {
  const definition = loadPackageDefinition(loadSync(PROTO_PATH, { keepCase: true })) as unknown as {
    jwt: { services: { JwtService: ServiceClientConstructor } };
  };
  const server = new Server();
  server.addService(definition.jwt.services.JwtService.service, {
    GenerateJwt: () => {},
    VerifyJwt: (_call: unknown, callback: (err: object) => void) => {
      const trailers = new GrpcMetadata();
      trailers.set('retry-after-ms', '250');
      callback({ code: status.RESOURCE_EXHAUSTED, details: 'slow down', metadata: trailers });
    },
    GetJwks: () => {},
  });
  closers.push(() => server.forceShutdown());
  return new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, port) => (err === null ? resolve(port) : reject(err))),
  );
}

/** A JwtService of raw bytes: each method answers `answers[method]` as it is, well-formed or not, and counts its calls in `calls`. */
async function startRawServer(answers: Readonly<Record<string, Buffer>>, calls: string[] = []): Promise<number> {
  const same = (bytes: Buffer): Buffer => bytes;
  const codecs = { requestSerialize: same, requestDeserialize: same, responseSerialize: same, responseDeserialize: same };
  const methods = Object.keys(answers).map((name) => [
    name,
    { path: `/jwt.services.JwtService/${name}`, requestStream: false, responseStream: false, ...codecs },
  ]);
  const server = new Server();
  server.addService(
    Object.fromEntries(methods),
    Object.fromEntries(
      Object.entries(answers).map(([name, bytes]) => [
        name,
        (_call: unknown, callback: (err: null, reply: Buffer) => void) => {
          calls.push(name);
          callback(null, bytes);
        },
      ]),
    ),
  );
  closers.push(() => server.forceShutdown());
  return new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, port) => (err === null ? resolve(port) : reject(err))),
  );
}

function client(target: string, options?: Parameters<typeof createJwtClient>[1]) {
  const made = createJwtClient(target, options);
  closers.push(() => made.close());
  return made;
}

async function rejection(promise: Promise<unknown>): Promise<GrpcStatusError> {
  const err = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(err).toBeInstanceOf(GrpcStatusError);
  return err as GrpcStatusError;
}

describe('createJwtClient', () => {
  it('calls the three methods and returns typed responses, missing fields as proto3 defaults', async () => {
    const { port } = await startIssuerOf();
    const jwt = client(`127.0.0.1:${port}`);
    const made = await jwt.generateJwt({ algorithm: 'ES256', subject: 'ada@example.com', ttl_seconds: 60 });
    expect(made.sub).toBe('ada@example.com');
    expect(typeof made.expires_at).toBe('number');
    expect(made.expires_at - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(60);
    const verdict = await jwt.verifyJwt({ jwt: made.jwt });
    expect(verdict).toMatchObject({ valid: true, sub: 'ada@example.com', reason: 'REASON_UNSPECIFIED' });
    expect(JSON.parse(verdict.claims_json)).toMatchObject({ iss: 'https://issuer.test' });
    expect((await jwt.verifyJwt({ jwt: made.jwt, audience: 'elsewhere' })).reason).toBe('AUDIENCE_MISMATCH');
    const jwks = JSON.parse((await jwt.getJwks()).jwks_json) as { keys: { kid: string }[] };
    expect(jwks.keys.map((key) => key.kid)).toEqual([made.kid]);
  });

  it('rejects a failed call with a GrpcStatusError carrying the status', async () => {
    const { port } = await startIssuerOf();
    const err = await rejection(client(`127.0.0.1:${port}`).generateJwt({ algorithm: 'XS999', subject: 's' }));
    expect(err).toBeInstanceOf(JwtGrpcError);
    expect(err.code).toBe('ERR_GRPC_STATUS');
    expect(err.status).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(err.details).toMatch(/algorithm/);
  });

  it('carries the trailers of a failed call', async () => {
    const port = await startOddServer();
    const err = await rejection(client(`127.0.0.1:${port}`).verifyJwt({ jwt: 'x' }));
    expect(err.status).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    expect(err.details).toBe('slow down');
    expect(err.metadata.get('retry-after-ms')).toBe('250');
  });

  it('rejects a malformed response with INTERNAL naming the message and the field, and reads a well-formed one with unknown fields', async () => {
    const unknownThenKnown = Buffer.from([0x2a, 0x01, 0x78, 0x08, 0x01, 0x10, 0x80, 0x01]); // 5: 'x' (unknown), revoked, expires_at 128
    const port = await startRawServer({
      GenerateJwt: Buffer.from([0x20, 0x80]),
      VerifyJwt: Buffer.from([0x20, 0x0b]),
      RevokeJwt: unknownThenKnown,
    });
    const jwt = client(`127.0.0.1:${port}`);
    const cut = await rejection(jwt.generateJwt({ algorithm: 'ES256' }));
    expect(cut.status).toBe(GrpcStatus.INTERNAL);
    expect(cut.details).toContain('GenerateJwtResponse: field 4 (expires_at): truncated varint');
    expect((await rejection(jwt.verifyJwt({ jwt: 'a.b.c' }))).details).toContain('VerifyJwtResponse: field 4 (reason): unknown value 11');
    expect(await jwt.revokeJwt({ jti: 'id', expires_at: 1 })).toStrictEqual({ revoked: true, expires_at: 128 });
  });

  it('refuses a request field of the wrong type with INVALID_ARGUMENT naming it, sending nothing', async () => {
    const calls: string[] = [];
    const port = await startRawServer({ GenerateJwt: Buffer.alloc(0), VerifyJwt: Buffer.alloc(0) }, calls);
    const jwt = client(`127.0.0.1:${port}`);
    const err = await rejection(jwt.generateJwt({ algorithm: 'ES256', ttl_seconds: '60' as never }));
    expect(err.status).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(err.details).toBe('GenerateJwtRequest.ttl_seconds: must be an integer of the int64 range, got string');
    expect(await rejection(jwt.verifyJwt(undefined as never))).toMatchObject({
      status: GrpcStatus.INVALID_ARGUMENT,
      details: 'VerifyJwtRequest: must be an object, got undefined',
    });
    expect(calls).toEqual([]);
    expect(await jwt.generateJwt({ algorithm: 'ES256', ttl_seconds: 60 })).toStrictEqual({ jwt: '', sub: '', kid: '', expires_at: 0 });
    expect(calls).toEqual(['GenerateJwt']);
  });

  it('sends call metadata', async () => {
    const { port } = await startIssuerOf();
    const metadata = new CallMetadata().set('x-request-id', 'r-1');
    expect((await client(`127.0.0.1:${port}`).getJwks({}, { metadata })).jwks_json).toContain('keys');
  });

  it('ends a call at the default deadline, or at the one the call gives', async () => {
    const port = await startOddServer();
    const started = Date.now();
    const perCall = await rejection(client(`127.0.0.1:${port}`).generateJwt({ algorithm: 'ES256' }, { deadlineMs: 200 }));
    expect(perCall.status).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    const byDefault = await rejection(client(`127.0.0.1:${port}`, { deadlineMs: 200 }).generateJwt({ algorithm: 'ES256' }));
    expect(byDefault.status).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('cancels a call when its signal aborts', async () => {
    const port = await startOddServer();
    const controller = new AbortController();
    const pending = client(`127.0.0.1:${port}`).generateJwt({ algorithm: 'ES256' }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect((await rejection(pending)).status).toBe(GrpcStatus.CANCELLED);
    expect((await rejection(client(`127.0.0.1:${port}`).getJwks({}, { signal: controller.signal }))).status).toBe(GrpcStatus.CANCELLED);
  });

  it('refuses calls once closed (close, or leaving a using block)', async () => {
    const { port } = await startIssuerOf();
    const jwt = client(`127.0.0.1:${port}`);
    await jwt.getJwks();
    jwt.close();
    jwt.close();
    expect((await rejection(jwt.getJwks())).status).toBe(GrpcStatus.CANCELLED);
    let escaped: ReturnType<typeof createJwtClient> | undefined;
    {
      using scoped = createJwtClient(`127.0.0.1:${port}`);
      await scoped.getJwks();
      escaped = scoped;
    }
    expect((await rejection(escaped.getJwks())).status).toBe(GrpcStatus.CANCELLED);
  });

  it('validates its options once, naming the bad one', () => {
    const cases: [string, () => unknown][] = [
      ['target', () => createJwtClient('')],
      ['deadlineMs', () => createJwtClient('127.0.0.1:1', { deadlineMs: 0 })],
      ['loadBalancing', () => createJwtClient('127.0.0.1:1', { loadBalancing: 'random' as 'round_robin' })],
      [
        'loadBalancing',
        () => createJwtClient('127.0.0.1:1', { loadBalancing: 'round_robin', channelOptions: { 'grpc.service_config': '{}' } }),
      ],
      ['credentials', () => createJwtClient('127.0.0.1:1', { credentials: {} as never })],
    ];
    for (const [field, make] of cases) {
      expect(make).toThrow(JwtGrpcError);
      try {
        make();
      } catch (err) {
        expect((err as JwtGrpcError).code).toBe('ERR_INVALID_OPTION');
        expect((err as JwtGrpcError).field).toBe(field);
      }
    }
  });
});

describe('load balancing over a target with several addresses', () => {
  /** Which issuer answered each of `calls` sequential calls (each server puts its own iss in tokens). */
  async function spread(loadBalancing: 'pick_first' | 'round_robin' | undefined, calls: number): Promise<Map<string, number>> {
    const a = await startIssuerOf('https://a.test');
    const b = await startIssuerOf('https://b.test');
    const jwt = client(`ipv4:127.0.0.1:${a.port},127.0.0.1:${b.port}`, loadBalancing === undefined ? {} : { loadBalancing });
    const counts = new Map<string, number>([
      ['https://a.test', 0],
      ['https://b.test', 0],
    ]);
    for (let i = 0; i < calls; i++) {
      const { jwt: token } = await jwt.generateJwt({ algorithm: 'HS256', subject: 's' });
      const iss = (JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as { iss: string }).iss;
      counts.set(iss, (counts.get(iss) ?? 0) + 1);
    }
    return counts;
  }

  it('round_robin spreads calls over both servers', async () => {
    const counts = await spread('round_robin', 100);
    expect(counts.get('https://a.test')).toBeGreaterThanOrEqual(30);
    expect(counts.get('https://b.test')).toBeGreaterThanOrEqual(30);
  });

  it('pick_first (the default) sends every call to one server', async () => {
    const counts = await spread(undefined, 40);
    expect([...counts.values()].sort((x, y) => x - y)).toEqual([0, 40]);
  });
});
