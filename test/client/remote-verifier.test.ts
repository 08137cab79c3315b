/**
 * createRemoteVerifier against real issuers on loopback: when it fetches the JWK Set
 * (first use, unknown kid, age), how often at most, and what it does with odd sets and
 * with an issuer that is down.
 */
import { Server, ServerCredentials, type ServiceClientConstructor, loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { Registry } from 'prom-client';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sleep } from '../../bench/kit/wait.js';
import {
  ANY_AUDIENCE,
  GrpcStatusError,
  JwtGrpcError,
  type KeySet,
  type Logger,
  type RemoteVerifierOptions,
  PROTO_PATH,
  GrpcStatus,
  createJwtClient,
  createRemoteVerifier,
  createSigner,
  exportKeys,
  generateKeys,
  silentLogger,
} from '../../src/lib/index.js';
import { closeAllServers, startIssuer } from '../../bench/kit/jwt-servers.js';

let keys: KeySet;
let stranger: KeySet;
const closers: (() => unknown)[] = [];

beforeAll(async () => {
  keys = await generateKeys({ algorithms: ['ES256', 'EdDSA', 'HS256'] });
  stranger = await generateKeys({ algorithms: ['ES256'] });
});
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
  await closeAllServers(200);
});

const now = (): number => Math.floor(Date.now() / 1000);

function token(set: KeySet, alg = 'ES256', claims: Record<string, unknown> = {}): string {
  return createSigner(set).sign(alg, { sub: 'ada', iat: now(), exp: now() + 600, ...claims }).token;
}

/** A token of `alg` under a kid nobody has: signed by `stranger`'s key, header renamed. */
function unknownKidToken(kid: string): string {
  const [, payload] = token(stranger).split('.');
  return `${Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid })).toString('base64url')}.${payload}.c2ln`;
}

/** `jwt_grpc_remote_fetch_failures_total` of `registry`, by "document answer". */
async function failures(registry: Registry): Promise<Record<string, number>> {
  const metric = await registry.getSingleMetric('jwt_grpc_remote_fetch_failures_total')?.get();
  return Object.fromEntries((metric?.values ?? []).map(({ labels, value }) => [`${labels['document']} ${labels['answer']}`, value]));
}

function recordingLogger(): Logger & { lines: { level: string; message: string; fields: Record<string, unknown> }[] } {
  const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (message: string, fields: Readonly<Record<string, unknown>> = {}): void => {
      lines.push({ level, message, fields: { ...fields } });
    };
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

/** An issuer serving exactly `jwks()` from GetJwks: how odd or broken sets reach the verifier. */
async function startSetServer(jwks: () => string): Promise<string> {
  const definition = loadPackageDefinition(loadSync(PROTO_PATH, { keepCase: true })) as unknown as {
    jwt: { services: { JwtService: ServiceClientConstructor } };
  };
  const server = new Server();
  server.addService(definition.jwt.services.JwtService.service, {
    GenerateJwt: () => {},
    VerifyJwt: () => {},
    GetJwks: (_call: unknown, callback: (err: null, response: object) => void) => callback(null, { jwks_json: jwks() }),
  });
  closers.push(() => server.forceShutdown());
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, bound) => (err === null ? resolve(bound) : reject(err))),
  );
  return `127.0.0.1:${port}`;
}

/** A client to `target` that counts its GetJwks calls. */
function countingClient(target: string) {
  const client = createJwtClient(target, { deadlineMs: 2000 });
  closers.push(() => client.close());
  const calls = { getJwks: 0 };
  return {
    calls,
    client: {
      ...client,
      getJwks: (...args: Parameters<typeof client.getJwks>) => {
        calls.getJwks++;
        return client.getJwks(...args);
      },
    },
  };
}

describe('createRemoteVerifier', () => {
  it('verifies ES256 and EdDSA tokens with the fetched public keys, one fetch for many calls', async () => {
    const { target } = await startIssuer({ keys: keys });
    const { client, calls } = countingClient(target);
    const verifier = createRemoteVerifier(client, { audience: ANY_AUDIENCE, logger: silentLogger });
    expect(verifier.keys).toEqual([]);
    const results = await Promise.all([
      ...Array.from({ length: 20 }, () => verifier.verify(token(keys))),
      verifier.verify(token(keys, 'EdDSA')),
    ]);
    expect(results.every((result) => result.valid)).toBe(true);
    expect(calls.getJwks).toBe(1);
    expect(verifier.keys.map((key) => key.alg).sort()).toEqual(['ES256', 'EdDSA']);
    expect(verifier.keys.every((key) => !key.canSign)).toBe(true);
  });

  it('checks audience and issuer: its own defaults, or what a call asks', async () => {
    const { target } = await startIssuer({ keys: keys });
    const verifier = createRemoteVerifier(countingClient(target).client, {
      audience: 'api',
      issuer: 'https://a.test',
      logger: silentLogger,
    });
    const good = token(keys, 'ES256', { aud: 'api', iss: 'https://a.test' });
    expect((await verifier.verify(good)).valid).toBe(true);
    expect(await verifier.verify(good, { audience: 'other' })).toMatchObject({ valid: false, reason: 'AUDIENCE_MISMATCH' });
    expect(await verifier.verify(token(keys, 'ES256', { aud: 'api' }))).toMatchObject({ valid: false, reason: 'ISSUER_MISMATCH' });
    // Empty strings are "not set" (as in VerifyJwt's request): the verifier's own stay checked.
    const elsewhere = token(keys, 'ES256', { aud: 'other', iss: 'https://b.test' });
    expect(await verifier.verify(elsewhere, { audience: '', issuer: 'https://b.test' })).toMatchObject({
      valid: false,
      reason: 'AUDIENCE_MISMATCH',
    });
    expect(await verifier.verify(elsewhere, { audience: 'other', issuer: '' })).toMatchObject({ valid: false, reason: 'ISSUER_MISMATCH' });
    expect((await verifier.verify(elsewhere, { audience: 'other', issuer: 'https://b.test' })).valid).toBe(true);
    expect((await verifier.verify(elsewhere, { audience: ANY_AUDIENCE, issuer: 'https://b.test' })).valid).toBe(true);
    expect(verifier.audience).toBe('api');
  });

  it('is not made without an audience: a token for another service would pass; ANY_AUDIENCE says so on purpose', async () => {
    const { target } = await startIssuer({ keys });
    const client = countingClient(target).client;
    for (const make of [
      () => createRemoteVerifier(client, undefined as never),
      () => createRemoteVerifier(client, {} as never),
      () => createRemoteVerifier(client, { audience: undefined } as never),
      () => createRemoteVerifier({ issuerUrl: 'https://auth.example' }, { issuer: 'https://auth.example' } as never),
    ]) {
      expect(make).toThrow(
        expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'audience', message: expect.stringContaining('ANY_AUDIENCE') }),
      );
    }
    expect(() => createRemoteVerifier(client, { audience: '' })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'audience' }),
    );
    expect(() => createRemoteVerifier(client, { audience: Symbol('ANY_AUDIENCE') as never })).toThrow(
      /audience: must be a non-empty string or ANY_AUDIENCE/,
    );
    const any = createRemoteVerifier(client, { audience: ANY_AUDIENCE, logger: silentLogger });
    expect((await any.verify(token(keys, 'ES256', { aud: 'anything' }))).valid).toBe(true);
    expect((await any.verify(token(keys))).valid).toBe(true);
    const api = createRemoteVerifier(client, { audience: 'api', logger: silentLogger });
    expect(await api.verify(token(keys))).toMatchObject({ valid: false, reason: 'AUDIENCE_MISMATCH' });
  });

  it('refetches for an unknown kid at most once per cooldown, concurrent misses sharing one fetch', async () => {
    const { target } = await startIssuer({ keys: keys });
    const { client, calls } = countingClient(target);
    const verifier = createRemoteVerifier(client, { audience: ANY_AUDIENCE, cooldownMs: 300, logger: silentLogger });
    await verifier.refresh();
    expect(calls.getJwks).toBe(1);
    await sleep(320);
    const misses = await Promise.all(Array.from({ length: 50 }, (_, i) => verifier.verify(unknownKidToken(`nobody-${i}`))));
    expect(misses.every((result) => !result.valid && result.reason === 'UNKNOWN_KEY')).toBe(true);
    expect(calls.getJwks).toBe(2);
    await verifier.verify(unknownKidToken('nobody-else'));
    expect(calls.getJwks).toBe(2);
    await sleep(320);
    await verifier.verify(unknownKidToken('nobody-later'));
    expect(calls.getJwks).toBe(3);
  });

  it('refetches in the background once the set is older than maxAgeMs, answering meanwhile', async () => {
    const { target } = await startIssuer({ keys: keys });
    const { client, calls } = countingClient(target);
    const verifier = createRemoteVerifier(client, { audience: ANY_AUDIENCE, maxAgeMs: 200, cooldownMs: 0, logger: silentLogger });
    expect((await verifier.verify(token(keys))).valid).toBe(true);
    await sleep(250);
    expect((await verifier.verify(token(keys))).valid).toBe(true);
    await sleep(50);
    expect(calls.getJwks).toBe(2);
  });

  it('keeps the last good set when the issuer goes down, and says so', async () => {
    const { server, target } = await startIssuer({ keys: keys });
    const logger = recordingLogger();
    const verifier = createRemoteVerifier(countingClient(target).client, { audience: ANY_AUDIENCE, maxAgeMs: 100, cooldownMs: 0, logger });
    expect((await verifier.verify(token(keys))).valid).toBe(true);
    await server.close({ graceMs: 0 });
    await sleep(150);
    expect((await verifier.verify(token(keys))).valid).toBe(true);
    expect(await verifier.verify(unknownKidToken('rotated-in'))).toMatchObject({ valid: false, reason: 'UNKNOWN_KEY' });
    expect((await verifier.verify(token(keys))).valid).toBe(true);
    const warning = logger.lines.find((line) => line.level === 'warn' && line.message.includes('last good set'));
    expect(warning?.fields).toMatchObject({ issuer: target });
  });

  it('keeps the last good set through an outage until maxStaleMs, then refuses with UNAVAILABLE, counting both', async () => {
    const { server, target } = await startIssuer({ keys: keys });
    const registry = new Registry();
    const logger = recordingLogger();
    const options: RemoteVerifierOptions = {
      audience: ANY_AUDIENCE,
      maxAgeMs: 100,
      cooldownMs: 0,
      maxStaleMs: 1_500,
      logger,
      metricsRegistry: registry,
    };
    const verifier = createRemoteVerifier(countingClient(target).client, options);
    await verifier.refresh();
    const fetchedAt = Date.now();
    await server.close({ graceMs: 0 });
    await sleep(150);
    // Within the bound: the set answers, and the background refetch that fails is counted as answered by it.
    expect((await verifier.verify(token(keys))).valid).toBe(true);
    await expect.poll(() => failures(registry)).toMatchObject({ 'jwks last_good': 1 });
    await sleep(fetchedAt + 1_600 - Date.now());
    const refused = await verifier.verify(token(keys)).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(refused).toMatchObject({ status: GrpcStatus.UNAVAILABLE, details: expect.stringMatching(/past maxStaleMs \(1500 ms\)$/) });
    expect(verifier.keys).toEqual([]);
    expect(await failures(registry)).toMatchObject({ 'jwks last_good': 1, 'jwks refused': 1, 'status_list refused': 0 });
    expect(logger.lines.some((line) => line.message.includes('older than maxStaleMs, calls are refused'))).toBe(true);
  });

  it('rejects with UNAVAILABLE naming the issuer while it has never had a set, retrying at most once a second', async () => {
    const { target } = await startIssuer({ keys: keys });
    const unreachable = target.replace(/:\d+$/, ':1');
    const { client, calls } = countingClient(unreachable);
    const logger = recordingLogger();
    const verifier = createRemoteVerifier(client, { audience: ANY_AUDIENCE, logger });
    for (const attempt of [verifier.verify(token(keys)), verifier.refresh()]) {
      const err = await attempt.then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(err).toBeInstanceOf(GrpcStatusError);
      expect((err as GrpcStatusError).status).toBe(GrpcStatus.UNAVAILABLE);
      expect((err as GrpcStatusError).details).toContain(`no JWK Set from issuer ${unreachable}`);
    }
    const fetchesSoFar = calls.getJwks;
    await expect(verifier.verify(token(keys))).rejects.toThrow(GrpcStatusError);
    expect(calls.getJwks).toBe(fetchesSoFar);
    expect(logger.lines.some((line) => line.level === 'warn' && line.fields['issuer'] === unreachable)).toBe(true);
  });

  it('answers UNKNOWN_KEY with the reason for an issuer that publishes no keys (HMAC only)', async () => {
    const hmacOnly = await generateKeys({ algorithms: ['HS256'] });
    const { target } = await startIssuer({ keys: hmacOnly });
    const logger = recordingLogger();
    const verifier = createRemoteVerifier(countingClient(target).client, { audience: ANY_AUDIENCE, logger });
    expect(await verifier.verify(token(hmacOnly, 'HS256'))).toMatchObject({
      valid: false,
      reason: 'UNKNOWN_KEY',
      message: expect.stringContaining('HS256 tokens cannot be verified with a JWK Set'),
    });
    expect(await verifier.verify(token(stranger))).toMatchObject({
      valid: false,
      reason: 'UNKNOWN_KEY',
      message: expect.stringContaining('publishes no key that can verify'),
    });
    expect(verifier.keys).toEqual([]);
    expect(logger.lines.some((line) => line.message.includes('no key that can verify'))).toBe(true);
  });

  it('takes only public, usable keys from a set: oct and odd keys are left out, private members dropped', async () => {
    const full = exportKeys(keys, { includePrivate: true }).keys;
    const es = full.find((jwk) => jwk.alg === 'ES256');
    const hs = full.find((jwk) => jwk.alg === 'HS256');
    const set = {
      keys: [
        es, // with its private member d
        hs, // a secret, published by mistake
        { ...exportKeys(stranger).keys[0], kid: 'enc-key', use: 'enc' },
        { kty: 'RSA', kid: 'weird', alg: 'RS256', n: 'AQAB', e: 'AQAB' },
        'not a key',
      ],
    };
    const logger = recordingLogger();
    const verifier = createRemoteVerifier(countingClient(await startSetServer(() => JSON.stringify(set))).client, {
      audience: ANY_AUDIENCE,
      logger,
    });
    expect((await verifier.verify(token(keys))).valid).toBe(true);
    expect(verifier.keys).toEqual([{ kid: es?.kid, alg: 'ES256', active: false, canSign: false }]);
    expect(await verifier.verify(token(keys, 'HS256'))).toMatchObject({ valid: false, reason: 'UNKNOWN_KEY' });
    const leftOut = logger.lines
      .filter((line) => line.message === 'JWK Set key left out')
      .map((line) => [line.fields['kid'], line.fields['reason']]);
    expect(leftOut).toEqual([
      [hs?.kid, 'unsupported'],
      ['enc-key', 'unsupported'],
      ['weird', 'unsupported'],
      ['keys[4]', 'malformed'],
    ]);
    expect(JSON.stringify(logger.lines)).not.toContain(String(hs?.k));
    expect(JSON.stringify(logger.lines)).not.toContain(String(es?.d));
  });

  it('refuses a set that is not JSON, lacks keys or repeats a kid, keeping the last good one', async () => {
    let served = JSON.stringify(exportKeys(keys));
    const target = await startSetServer(() => served);
    const verifier = createRemoteVerifier(countingClient(target).client, { audience: ANY_AUDIENCE, cooldownMs: 0, logger: silentLogger });
    await verifier.refresh();
    const kids = verifier.keys.map((key) => key.kid);
    const es = exportKeys(keys).keys[0];
    for (const bad of ['{not json', '{"set":[]}', JSON.stringify({ keys: [es, es] })]) {
      served = bad;
      await expect(verifier.refresh()).rejects.toThrow(/no JWK Set from issuer/);
      expect(verifier.keys.map((key) => key.kid)).toEqual(kids);
      expect((await verifier.verify(token(keys))).valid).toBe(true);
    }
  });

  it('validates its options once, naming the bad one', () => {
    const client = countingClient('127.0.0.1:1').client;
    const cases: [string, () => unknown][] = [
      ['client', () => createRemoteVerifier({} as never, { audience: ANY_AUDIENCE })],
      ['cooldownMs', () => createRemoteVerifier(client, { audience: ANY_AUDIENCE, cooldownMs: -1 })],
      ['maxAgeMs', () => createRemoteVerifier(client, { audience: ANY_AUDIENCE, maxAgeMs: 0 })],
      ['maxStaleMs', () => createRemoteVerifier(client, { audience: ANY_AUDIENCE, maxStaleMs: 0 })],
      ['clockToleranceSeconds', () => createRemoteVerifier(client, { audience: ANY_AUDIENCE, clockToleranceSeconds: 301 })],
      ['audience', () => createRemoteVerifier(client, { audience: '' })],
    ];
    for (const [field, make] of cases) {
      const err = (() => {
        try {
          make();
        } catch (thrown) {
          return thrown;
        }
        return undefined;
      })();
      expect(err).toBeInstanceOf(JwtGrpcError);
      expect(err).toMatchObject({ code: 'ERR_INVALID_OPTION', field });
    }
  });
});

/**
 * The verifier itself (RemoteJwksVerifier behind createRemoteVerifier), against an issuer
 * in process: what it fetches when, with no network between.
 */
describe('createRemoteVerifier in process', () => {
  /** An issuer whose set is `served` (undefined: down), counting its fetches. */
  function fakeIssuer(served: () => KeySet | undefined) {
    const issuer = {
      target: 'fake-issuer:1',
      fetches: 0,
      getJwks: async () => {
        issuer.fetches += 1;
        const set = served();
        if (set === undefined) throw new GrpcStatusError(GrpcStatus.UNAVAILABLE, 'connection refused');
        return { jwks_json: JSON.stringify(exportKeys(set)) };
      },
    };
    return issuer;
  }

  it('returns plain functions: verify and refresh work unbound', async () => {
    const { verify, refresh } = createRemoteVerifier(
      fakeIssuer(() => keys),
      { audience: ANY_AUDIENCE, logger: silentLogger },
    );
    await refresh();
    await expect(verify(token(keys))).resolves.toMatchObject({ valid: true, payload: { sub: 'ada' } });
  });

  it('before any set, a down issuer is asked at most once per retry interval; the last failure answers between', async () => {
    const issuer = fakeIssuer(() => undefined);
    const verifier = createRemoteVerifier(issuer, { audience: ANY_AUDIENCE, logger: silentLogger });
    const first = await verifier.verify(token(keys)).catch((err: unknown) => err);
    expect(first).toMatchObject({
      status: GrpcStatus.UNAVAILABLE,
      details: 'no JWK Set from issuer fake-issuer:1: UNAVAILABLE: connection refused',
    });
    expect(await verifier.verify(token(keys)).catch((err: unknown) => err)).toBe(first);
    expect(issuer.fetches).toBe(1);
    expect(verifier.keys).toEqual([]);
  });

  it('an unknown kid costs one refetch, after which the new key verifies; an HMAC token none', async () => {
    let served = stranger;
    const issuer = fakeIssuer(() => served);
    const verifier = createRemoteVerifier(issuer, { audience: ANY_AUDIENCE, logger: silentLogger, cooldownMs: 0 });
    await verifier.refresh();
    served = keys;
    await expect(verifier.verify(token(keys))).resolves.toMatchObject({ valid: true });
    expect(issuer.fetches).toBe(2);
    await expect(verifier.verify(token(keys, 'HS256'))).resolves.toMatchObject({
      valid: false,
      reason: 'UNKNOWN_KEY',
      message: expect.stringContaining('HS256 tokens cannot be verified with a JWK Set'),
    });
    expect(issuer.fetches).toBe(2);
  });

  it('a refetch of an unchanged set keeps its keys and logs nothing new', async () => {
    const logger = recordingLogger();
    const verifier = createRemoteVerifier(
      fakeIssuer(() => stranger),
      { audience: ANY_AUDIENCE, logger },
    );
    await verifier.refresh();
    const kids = verifier.keys.map((key) => key.kid);
    await verifier.refresh();
    expect(verifier.keys.map((key) => key.kid)).toEqual(kids);
    expect(logger.lines.filter((line) => line.message === 'JWK Set loaded')).toHaveLength(1);
  });
});
