/**
 * One rule per option, whoever reads it: the library's factories (createJwtServer,
 * addJwtService, createVerifier, runCluster, parseNodeMaxProcs) accept and refuse the
 * same values, named the way their caller wrote them.
 */
import { Server } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANY_AUDIENCE,
  JwtGrpcError,
  type KeySet,
  addJwtService,
  createJwtClient,
  createJwtServer,
  createRemoteVerifier,
  createVerifier,
  parseNodeMaxProcs,
  runCluster,
  silentLogger,
} from '../../src/lib/index.js';
import { ClientPool, decodeJwt } from '../../bench/kit/grpc-clients.js';
import { closeAllServers, sharedKeys, startServer } from '../../bench/kit/jwt-servers.js';

let keys: KeySet;
const clients = new ClientPool();

beforeAll(async () => {
  keys = await sharedKeys();
});

afterAll(async () => {
  clients.closeAll();
  await closeAllServers();
});

/** The error `run` throws, which must be an ERR_INVALID_OPTION naming `field`. */
function optionError(run: () => unknown, field: string): JwtGrpcError {
  let thrown: unknown;
  try {
    run();
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(JwtGrpcError);
  expect(thrown).toMatchObject({ code: 'ERR_INVALID_OPTION', field });
  expect((thrown as Error).message).toContain(field);
  return thrown as JwtGrpcError;
}

describe('the verification cache', () => {
  it.each([[{ maxEntries: 0 }], [false as const], [{ maxEntries: 1 }], [{ maxEntries: 10_000_000 }]])(
    '%j is accepted by the verifier, the service and the server alike',
    (cache) => {
      expect(() => createVerifier(keys, { audience: ANY_AUDIENCE, cache })).not.toThrow();
      expect(() => addJwtService(new Server(), { keys, verifyCache: cache, logger: silentLogger })).not.toThrow();
      expect(() => createJwtServer({ keys, verifyCache: cache, logger: silentLogger })).not.toThrow();
    },
  );

  it.each([[{ maxEntries: -1 }], [{ maxEntries: 1.5 }], [{ maxEntries: 10_000_001 }], [true], [100]])(
    '%j is refused by all three',
    (cache) => {
      const bad = cache as unknown as false;
      optionError(
        () => createVerifier(keys, { audience: ANY_AUDIENCE, cache: bad }),
        typeof cache === 'object' ? 'cache.maxEntries' : 'cache',
      );
      const field = typeof cache === 'object' ? 'verifyCache.maxEntries' : 'verifyCache';
      optionError(() => addJwtService(new Server(), { keys, verifyCache: bad }), field);
      optionError(() => createJwtServer({ keys, verifyCache: bad, logger: silentLogger }), field);
    },
  );

  it('{ maxEntries: 0 } serves VerifyJwt without a cache: a token verifies every time', async () => {
    const { port } = await startServer({ transport: 'http2', keys, verifyCache: { maxEntries: 0 } });
    const client = clients.jwt(port);
    const { jwt } = await client.generateJwt({ algorithm: 'HS256', subject: 'no-cache@example.com' });
    for (let i = 0; i < 3; i++) expect(await client.verifyJwt({ jwt })).toMatchObject({ valid: true, sub: 'no-cache@example.com' });
  });
});

describe('integers, never fractions', () => {
  it.each([
    ['clockToleranceSeconds', 1.5],
    ['clockToleranceSeconds', 301],
    ['clockToleranceSeconds', -1],
    ['maxTokenLength', 63],
    ['maxTokenLength', 100.5],
  ] as const)('%s %j is refused by the verifier and the server, naming it', (field, value) => {
    optionError(() => createVerifier(keys, { audience: ANY_AUDIENCE, [field]: value }), field);
    optionError(() => createJwtServer({ keys, [field]: value, logger: silentLogger }), field);
  });

  it.each([
    ['workers', 1.5],
    ['workers', 1025],
    ['graceMs', 600_001],
    ['graceMs', 2.5],
    ['maxQuickRestarts', 0],
  ] as const)('runCluster refuses %s %j before starting anything', (field, value) => {
    optionError(() => runCluster({ address: '127.0.0.1:0', workers: 2, [field]: value, handleSignals: false }), field);
  });

  it('parseNodeMaxProcs takes the same worker bounds, and "max"', () => {
    expect(parseNodeMaxProcs('1024')).toBe(1024);
    expect(parseNodeMaxProcs(' 3 ')).toBe(3);
    expect(parseNodeMaxProcs('max')).toBeGreaterThanOrEqual(1);
    expect(parseNodeMaxProcs(undefined)).toBe(1);
    for (const bad of ['1025', '0', '1.5', 'abc']) optionError(() => parseNodeMaxProcs(bad), 'NODEMAXPROCS');
  });
});

describe('options across options', () => {
  it('a defaultTtlSeconds above maxTtlSeconds is refused, naming both', () => {
    const err = optionError(
      () => createJwtServer({ keys, defaultTtlSeconds: 600, maxTtlSeconds: 60, logger: silentLogger }),
      'defaultTtlSeconds',
    );
    expect(err.message).toContain('maxTtlSeconds');
  });

  it('without defaultTtlSeconds, a maxTtlSeconds below 7200 lowers the default lifetime to it', async () => {
    const { port } = await startServer({ transport: 'http2', keys, maxTtlSeconds: 60 });
    const { jwt } = await clients.jwt(port).generateJwt({ algorithm: 'HS256', subject: 'short@example.com' });
    const { payload } = decodeJwt(jwt);
    expect((payload['exp'] as number) - (payload['iat'] as number)).toBe(60);
  });

  it("runCluster checks the servers' options in the primary, so a bad one fails the start once, named by its path", () => {
    optionError(
      () => runCluster({ address: '127.0.0.1:0', workers: 2, server: { maxTtlSeconds: 0 }, handleSignals: false }),
      'server.maxTtlSeconds',
    );
  });

  it('runCluster takes a policy loader (reloadable) or a fixed server.policy, never both: two sources would disagree after a reload', () => {
    const policy = { callers: { 'dns:a.example': { subjects: ['a'] } } };
    const error = optionError(
      () => runCluster({ address: '127.0.0.1:0', policy: async () => policy, server: { policy }, handleSignals: false }),
      'policy',
    );
    expect(error.message).toContain('not both');
    optionError(() => runCluster({ address: '127.0.0.1:0', policy: policy as never, handleSignals: false }), 'policy');
  });
});

describe('options only code can give', () => {
  it.each([
    ['logger', { logger: { info() {} } }],
    ['channelOptions', { channelOptions: 'grpc.keepalive_time_ms=1' }],
    ['health', { health: 'no' }],
  ])('%s of the wrong type is refused, naming it', (field, bad) => {
    optionError(() => createJwtServer({ keys, logger: silentLogger, ...(bad as object) }), field);
  });
});

describe('a null is not "not given"', () => {
  it.each(['cooldownMs', 'maxAgeMs', 'issuer'])('createRemoteVerifier refuses %s: null rather than take its default', (field) => {
    const client = createJwtClient('127.0.0.1:1');
    try {
      const error = optionError(() => createRemoteVerifier(client, { audience: ANY_AUDIENCE, [field]: null }), field);
      expect(error.message).toMatch(/got null$/);
    } finally {
      client.close();
    }
  });
});

describe('addJwtService takes only its own options', () => {
  it.each([
    ['health', { health: false }, /health: is not an option of addJwtService; it is an option of createJwtServer/],
    ['metricsPort', { metricsPort: 9464 }, /metricsPort: is not an option of addJwtService; it is an option of createJwtServer/],
    ['isuer', { isuer: 'https://auth.example' }, /isuer: is not an option of addJwtService; did you mean issuer\?/],
  ])('%s is refused with ERR_INVALID_OPTION, not ignored', (field, extra, message) => {
    const server = new Server();
    const err = optionError(() => addJwtService(server, { keys, logger: silentLogger, ...(extra as object) } as never), field);
    expect(err.message).toMatch(message);
  });
});
