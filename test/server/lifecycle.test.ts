/**
 * The server around JwtService, on each transport: health, reflection, graceful close,
 * state errors, ephemeral keys and key rotation. Once, as they do not depend on the
 * transport: option validation, and addJwtService on a grpc-js Server of your own.
 */
import { createServer as createNetServer } from 'node:net';
import { Client, Server, ServerCredentials, type ServiceError, credentials, logVerbosity, setLogVerbosity } from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type JwtServer,
  type JwtServerOptions,
  JwtGrpcError,
  type KeySet,
  addJwtService,
  createJwtServer,
  exportKeys,
  generateKeys,
  importKeys,
  silentLogger,
} from '../../src/lib/index.js';
import { ClientPool, callError, decodeJwt, statusName } from '../../bench/kit/grpc-clients.js';
import { healthCheck, listServices, probePort } from '../../bench/kit/grpc-extras.js';
import { TRANSPORTS, closeAllServers, recordingLogger, sharedKeys, startServer, trackServer } from '../../bench/kit/jwt-servers.js';

const clients = new ClientPool();
let keys: KeySet;

beforeAll(async () => {
  keys = await sharedKeys();
});

afterEach(async () => {
  clients.closeAll();
  await closeAllServers();
});

afterAll(async () => {
  clients.closeAll();
  await closeAllServers();
});

/** Resolves to the error thrown by `fn` (sync or async). */
async function thrown(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

/** A unary method that takes `delayMs` before answering, to hold a call in flight. */
const SLOW_METHOD = '/test.Slow/Wait';
function addSlowService(server: JwtServer, onCall: () => void, delayMs: number): void {
  const identity = (value: Buffer): Buffer => value;
  server.addService(
    {
      Wait: {
        path: SLOW_METHOD,
        requestStream: false,
        responseStream: false,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: identity,
        responseDeserialize: identity,
      },
    },
    {
      Wait: () => {
        onCall();
        return new Promise<Buffer>((resolve) => setTimeout(() => resolve(Buffer.from('done')), delayMs).unref());
      },
    },
  );
}

function callSlow(port: number, host = '127.0.0.1'): { result: Promise<string>; close(): void } {
  const client = new Client(`${host}:${port}`, credentials.createInsecure());
  const identity = (value: Buffer): Buffer => value;
  const result = new Promise<string>((resolve, reject) => {
    client.makeUnaryRequest(SLOW_METHOD, identity, identity, Buffer.alloc(0), { deadline: Date.now() + 20_000 }, (err, value) =>
      err ? reject(err) : resolve(String(value)),
    );
  });
  return { result, close: () => client.close() };
}

describe.each(TRANSPORTS)('on transport %s', (transport) => {
  // What health and reflection answer: test/reflection/. Here, that each can be turned off alone.
  describe('health', () => {
    it('is UNIMPLEMENTED with health: false', async () => {
      const { port } = await startServer({ transport, keys, health: false });
      const err = (await callError(healthCheck(port, ''))) as ServiceError;
      expect(statusName(err.code)).toBe('UNIMPLEMENTED');
      // JwtService itself is unaffected.
      expect((await clients.jwt(port).generateJwt({ algorithm: 'HS256', subject: 's' })).sub).toBe('s');
    });
  });

  describe('reflection', () => {
    it('is UNIMPLEMENTED with reflection: false', async () => {
      const { port } = await startServer({ transport, keys, reflection: false });
      const err = (await callError(listServices(port))) as ServiceError;
      expect(statusName(err.code)).toBe('UNIMPLEMENTED');
      expect(await healthCheck(port, '')).toBe('SERVING');
    });
  });

  describe('close', () => {
    it('lets a call in flight finish, then stops accepting connections', async () => {
      let started!: () => void;
      const inHandler = new Promise<void>((resolve) => (started = resolve));
      const server = trackServer(createJwtServer({ transport, keys, logger: silentLogger }));
      addSlowService(server, () => started(), 400);
      const port = await server.listen('127.0.0.1:0');
      const slow = callSlow(port);
      try {
        await inHandler;
        const closed = server.close({ graceMs: 10_000 });
        expect(await slow.result).toBe('done');
        await closed;
        expect(await probePort(port)).toBe('ECONNREFUSED');
      } finally {
        slow.close();
      }
    });

    it.each(['127.0.0.1', 'localhost'])('forces calls still running after graceMs (listening on %s:0)', async (host) => {
      let started!: () => void;
      const inHandler = new Promise<void>((resolve) => (started = resolve));
      const server = trackServer(createJwtServer({ transport, keys, logger: silentLogger }));
      addSlowService(server, () => started(), 15_000);
      const port = await server.listen(`${host}:0`);
      const slow = callSlow(port, host);
      try {
        await inHandler;
        // Awaited after close: the call may end before close() resolves (on http2 it does:
        // the connection closes only after its calls are cancelled).
        const failure = callError(slow.result);
        const t0 = Date.now();
        await server.close({ graceMs: 200 });
        // Generous: the point is that close does not wait for the 15 s call.
        expect(Date.now() - t0).toBeLessThan(10_000);
        const err = (await failure) as ServiceError;
        // The server resets the stream with CANCEL: grpc-js reports it as CANCELLED.
        expect(statusName(err.code), err.details).toBe('CANCELLED');
        expect(Date.now() - t0).toBeLessThan(10_000);
      } finally {
        slow.close();
      }
    });

    it('completes a burst of 200 RS256 calls in flight when close() is called, then refuses connections', async () => {
      const { server, port } = await startServer({ transport, keys });
      const client = clients.jwt(port);
      await client.generateJwt({ algorithm: 'RS256', subject: 'warm-up' }); // connection established
      let answered = 0;
      let firstAnswer!: () => void;
      const first = new Promise<void>((resolve) => (firstAnswer = resolve));
      const calls = Array.from({ length: 200 }, (_, i) =>
        client.generateJwt({ algorithm: 'RS256', subject: `burst-${i}` }).then((res) => {
          answered += 1;
          firstAnswer();
          return res;
        }),
      );
      // Once the server has answered one, it has the others' streams: close with them in flight.
      await first;
      const closed = server.close({ graceMs: 20_000 });
      expect(answered).toBeLessThan(200);
      const results = await Promise.allSettled(calls);
      const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [`#${i}: ${(r.reason as ServiceError).message}`] : []));
      expect(failed).toEqual([]);
      results.forEach((r, i) => expect(r.status === 'fulfilled' && r.value.sub).toBe(`burst-${i}`));
      await closed;
      expect(await probePort(port)).toBe('ECONNREFUSED');
    });

    it('is idempotent', async () => {
      const { server } = await startServer({ transport, keys });
      const a = server.close();
      expect(server.close()).toBe(a);
      await a;
      await server.close();
    });

    it('runs on `await using` (Symbol.asyncDispose)', async () => {
      let port = 0;
      {
        await using server = createJwtServer({ transport, keys, logger: silentLogger });
        port = await server.listen('127.0.0.1:0');
        const client = clients.jwt(port);
        expect((await client.generateJwt({ algorithm: 'HS256', subject: 's' })).sub).toBe('s');
        client.close();
      }
      expect(await probePort(port)).toBe('ECONNREFUSED');
    });
  });

  describe('state', () => {
    it('refuses a second listen with ERR_SERVER_STATE', async () => {
      const { server } = await startServer({ transport, keys });
      const err = await thrown(() => server.listen('127.0.0.1:0'));
      expect(err).toBeInstanceOf(JwtGrpcError);
      expect(err).toMatchObject({ code: 'ERR_SERVER_STATE' });
    });

    it('refuses listen after close with ERR_SERVER_STATE', async () => {
      const server = trackServer(createJwtServer({ transport, keys, logger: silentLogger }));
      await server.close();
      expect(await thrown(() => server.listen('127.0.0.1:0'))).toMatchObject({ code: 'ERR_SERVER_STATE' });
    });

    it('has no service handle before listen', () => {
      const server = trackServer(createJwtServer({ transport, keys, logger: silentLogger }));
      expect(() => server.service).toThrow(JwtGrpcError);
    });

    it('fails listen on a port in use with ERR_LISTEN', async () => {
      setLogVerbosity(logVerbosity.NONE); // on transport grpc-js, its Server logs the failed bind itself
      const blocker = createNetServer();
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
      try {
        const port = (blocker.address() as { port: number }).port;
        const server = trackServer(createJwtServer({ transport, keys, logger: silentLogger }));
        const err = await thrown(() => server.listen(`127.0.0.1:${port}`));
        expect(err).toBeInstanceOf(JwtGrpcError);
        expect(err).toMatchObject({ code: 'ERR_LISTEN', field: 'address' });
        expect((err as Error).message).toContain(String(port));
      } finally {
        setLogVerbosity(logVerbosity.ERROR);
        await new Promise((resolve) => blocker.close(resolve));
      }
    });
  });

  describe('ephemeral keys', () => {
    it('generates keys at listen and warns through the logger with the kids and no key material', async () => {
      const logger = recordingLogger();
      const server = trackServer(createJwtServer({ transport, logger }));
      expect(logger.lines).toEqual([]);
      const port = await server.listen('127.0.0.1:0');
      const kids = server.service.keys.keys.map((key) => key.kid);
      expect(kids).toHaveLength(8);

      const warnings = logger.lines.filter((line) => line.level === 'warn');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.message).toMatch(/ephemeral/i);
      expect(warnings[0]?.fields).toEqual({ kids });

      const logged = JSON.stringify(logger.lines);
      const secrets = exportKeys(server.service.keys, { includePrivate: true }).keys.flatMap((jwk) =>
        (['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'] as const).flatMap((member) => {
          const value = (jwk as Record<string, unknown>)[member];
          return typeof value === 'string' ? [value] : [];
        }),
      );
      expect(secrets.length).toBeGreaterThanOrEqual(8);
      for (const secret of secrets) {
        expect(logged).not.toContain(secret);
        expect(logged).not.toContain(secret.slice(0, 16));
      }

      const client = clients.jwt(port);
      const made = await client.generateJwt({ algorithm: 'ES384', subject: 'eph' });
      expect(kids).toContain(made.kid);
      expect((await client.verifyJwt({ jwt: made.jwt })).valid).toBe(true);
    });
  });

  describe('key rotation', () => {
    it('keeps verifying tokens signed before setKeys and signs new ones with the new kid', async () => {
      const oldKeys = await generateKeys({ algorithms: ['ES256', 'HS256'] });
      const newKeys = await generateKeys({ algorithms: ['ES256', 'HS256'] });
      const { server, port } = await startServer({ transport, keys: oldKeys });
      const client = clients.jwt(port);
      const before = await Promise.all(['ES256', 'HS256'].map((algorithm) => client.generateJwt({ algorithm, subject: 'rot' })));
      // Verified once before rotation, so the old verification cache held them.
      for (const made of before) expect((await client.verifyJwt({ jwt: made.jwt })).valid).toBe(true);

      const rotated = importKeys({
        keys: [...exportKeys(newKeys, { includePrivate: true }).keys, ...exportKeys(oldKeys, { includePrivate: true }).keys],
      });
      server.service.setKeys(rotated);
      expect(server.service.keys).toBe(rotated);

      for (const made of before) {
        expect(await client.verifyJwt({ jwt: made.jwt })).toMatchObject({ valid: true, sub: 'rot' });
      }
      for (const algorithm of ['ES256', 'HS256']) {
        const made = await client.generateJwt({ algorithm, subject: 'rot2' });
        const newKid = newKeys.keys.find((key) => key.alg === algorithm)?.kid;
        expect(made.kid).toBe(newKid);
        expect(decodeJwt(made.jwt).header['kid']).toBe(newKid);
        expect((await client.verifyJwt({ jwt: made.jwt })).valid).toBe(true);
      }
      const jwksKids = (JSON.parse((await client.getJwks()).jwks_json) as { keys: { kid: string }[] }).keys.map((key) => key.kid);
      expect(jwksKids).toEqual([newKeys.keys[0]?.kid, oldKeys.keys[0]?.kid]);

      // Dropping the old keys: their tokens stop verifying.
      server.service.setKeys(newKeys);
      const es256Before = before[0];
      expect(es256Before).toBeDefined();
      expect(await client.verifyJwt({ jwt: es256Before?.jwt ?? '' })).toMatchObject({ valid: false, reason: 'UNKNOWN_KEY' });
    });

    it('refuses a rotation to a set that cannot sign, keeping the old keys', async () => {
      const { server, port } = await startServer({ transport, keys });
      const publicOnly = importKeys({ keys: exportKeys(keys).keys });
      expect(() => server.service.setKeys(publicOnly)).toThrow(JwtGrpcError);
      expect(server.service.keys).toBe(keys);
      expect((await clients.jwt(port).generateJwt({ algorithm: 'ES256', subject: 's' })).kid).toBe(
        keys.keys.find((key) => key.alg === 'ES256')?.kid,
      );
    });
  });
});

// What one transport has and the other does not: the grpc-js Server itself, and grpc-js's
// own server options (channelOptions).
describe('what only the grpc-js transport has', () => {
  it('names its transport; grpcServer is the grpc-js Server on grpc-js, undefined on http2', async () => {
    const { server: own } = await startServer({ transport: 'http2', keys });
    expect(own.transport).toBe('http2');
    expect(own.grpcServer).toBeUndefined();
    const { server: grpcJs } = await startServer({ transport: 'grpc-js', keys });
    expect(grpcJs.transport).toBe('grpc-js');
    expect(grpcJs.grpcServer).toBeInstanceOf(Server);
    expect(trackServer(createJwtServer({ keys, logger: silentLogger })).transport, 'the default').toBe('http2');
  });

  it("channelOptions reach grpc-js and override jwt-grpc's own; on http2 they are refused, naming the option", async () => {
    const { port } = await startServer({ transport: 'grpc-js', keys, channelOptions: { 'grpc.max_receive_message_length': 2048 } });
    const client = clients.jwt(port);
    const err = (await callError(client.generateJwt({ algorithm: 'HS256', subject: 's'.repeat(4096) }))) as ServiceError;
    expect(statusName(err.code), err.details).toBe('RESOURCE_EXHAUSTED');
    expect((await client.generateJwt({ algorithm: 'HS256', subject: 's' })).sub).toBe('s');
    const refused = await thrown(() =>
      createJwtServer({ keys, logger: silentLogger, channelOptions: { 'grpc.max_receive_message_length': 2048 } }),
    );
    expect(refused).toMatchObject({ code: 'ERR_INVALID_OPTION', field: 'channelOptions' });
    expect((refused as Error).message).toMatch(/transport 'grpc-js' only/);
  });
});

// addJwtService is the grpc-js way in: it adds JwtService to a grpc-js Server the user already has.
describe('addJwtService', () => {
  it('serves JwtService from a plain grpc-js Server', async () => {
    const server = new Server();
    try {
      const handle = addJwtService(server, { keys, subjects: ['plain@example.com'], logger: silentLogger });
      expect(handle.keys).toBe(keys);
      const port = await new Promise<number>((resolve, reject) =>
        server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
      );
      const client = clients.jwt(port);
      const made = await client.generateJwt({ algorithm: 'EdDSA' });
      expect(made.sub).toBe('plain@example.com');
      expect(await client.verifyJwt({ jwt: made.jwt })).toMatchObject({ valid: true, sub: 'plain@example.com' });
      expect(JSON.parse((await client.getJwks()).jwks_json).keys.length).toBe(5);
    } finally {
      clients.closeAll();
      server.forceShutdown();
    }
  });

  it('validates its options at once', () => {
    const err = (() => {
      try {
        addJwtService(new Server(), { keys: 'not a key set' as unknown as KeySet });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(JwtGrpcError);
    expect(err).toMatchObject({ code: 'ERR_INVALID_OPTION', field: 'keys' });
  });
});

describe('options', () => {
  it.each([
    ['defaultTtlSeconds', { defaultTtlSeconds: -1 }],
    ['defaultTtlSeconds', { defaultTtlSeconds: 1.5 }],
    ['maxTtlSeconds', { maxTtlSeconds: 0 }],
    ['maxReceiveMessageBytes', { maxReceiveMessageBytes: 10 }],
    ['maxConnectionAgeMs', { maxConnectionAgeMs: 5 }],
    ['subjects', { subjects: [1] }],
    ['subjects', { subjects: [''] }],
    ['subjects', { subjects: 'ada' }],
    ['issuer', { issuer: '' }],
    ['clockToleranceSeconds', { clockToleranceSeconds: 301 }],
    ['keys', { keys: {} }],
  ])('throws ERR_INVALID_OPTION naming %s for %j', (field, bad) => {
    let err: unknown;
    try {
      createJwtServer({ logger: silentLogger, ...(bad as unknown as JwtServerOptions) });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(JwtGrpcError);
    expect(err).toMatchObject({ code: 'ERR_INVALID_OPTION', field });
    expect((err as Error).message).toContain(field);
  });
});
