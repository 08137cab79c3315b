/**
 * AWS KMS keys against local-kms (a pinned Go tool), reached through a TCP proxy that can
 * hang as a KMS that accepts connections and never answers: made by `keys generate --kms
 * alias/...`, served on both transports (ES256, ES384, RS256, checked by jose from the
 * served JWK Set); with KMS gone or hung, GenerateJwt answers UNAVAILABLE within the
 * deadline with a fixed message (the detail, ARNs included, in the log only) while VerifyJwt
 * and GetJwks keep working, and signing comes back within one breaker interval of KMS, without
 * a restart; a start against a hung KMS stops within the deadline; a key named by an alias is
 * pinned to its ARN, and an alias moved since is refused at reload.
 * PS256: local-kms's PSS salt is not PS256's, so a PS256 key is refused at load, naming the salt.
 */
import { constants, createHash, createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import * as jose from 'jose';
import { type Socket, connect, createServer } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../bench/kit/cli.js';
import type { LaunchedProcess } from '../../bench/kit/launcher.js';
import { ANY_AUDIENCE, type Algorithm, JwtGrpcError, createVerifier, importKeys, loadKeys, silentLogger } from '../../src/lib/index.js';
import { callError, ClientPool } from '../../bench/kit/grpc-clients.js';
import { TRANSPORTS, closeAllServers, recordingLogger, startServer } from '../../bench/kit/jwt-servers.js';
import { healthCheck } from '../../bench/kit/grpc-extras.js';
import { waitUntil } from '../../bench/kit/wait.js';
import { KEY_BACKEND_BREAKER_COOLDOWN_MS, KEY_BACKEND_UNAVAILABLE_MESSAGE } from '../../src/keys/backend.js';
import { findLocalKms, kmsEnv, startLocalKms } from '../../bench/kit/hsm.js';
import { freePort } from '../../bench/kit/ports.js';

/** The warnings a server logged: where a backend's failure is told in full. */
function warnings(logger: ReturnType<typeof recordingLogger>): string[] {
  return logger.lines.filter((line) => line.level === 'warn').map((line) => line.message);
}

const found = findLocalKms();
const skip = 'skip' in found ? found.skip : undefined;
/**
 * A TCP proxy in front of local-kms that can stop answering as a hung KMS does: paused, it
 * accepts connections and reads what they send, and forwards nothing, on new connections and
 * on those already open; resumed, new connections are forwarded again, while the ones it held
 * stay held until their client gives them up (`held` counts them).
 */
class HangingProxy {
  paused = false;
  readonly held = new Set<Socket>();
  readonly #pairs = new Set<{ client: Socket; upstream: Socket }>();
  readonly #server = createServer((client) => this.#accept(client));

  constructor(readonly target: () => number) {}

  listen(port: number): Promise<void> {
    return new Promise((resolve) => this.#server.listen(port, '127.0.0.1', resolve));
  }

  #accept(client: Socket): void {
    client.on('error', () => undefined);
    if (this.paused) return this.#hold(client);
    const upstream = connect(this.target(), '127.0.0.1');
    const pair = { client, upstream };
    const end = (): void => {
      this.#pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
    this.#pairs.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  #hold(client: Socket): void {
    this.held.add(client);
    client.on('close', () => this.held.delete(client));
    client.resume();
  }

  pause(): void {
    this.paused = true;
    for (const pair of this.#pairs) {
      this.#pairs.delete(pair);
      pair.client.unpipe(pair.upstream);
      pair.client.removeAllListeners('close');
      pair.upstream.removeAllListeners('close');
      pair.upstream.on('error', () => undefined).destroy();
      this.#hold(pair.client);
    }
  }

  close(): Promise<void> {
    for (const socket of this.held) socket.destroy();
    for (const { client } of this.#pairs) client.destroy();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-kms-'));
const clients = new ClientPool();
let kms: LaunchedProcess | undefined;
/** local-kms's own port; `port` is the proxy's, where every client goes. */
let kmsPort = 0;
let port = 0;
const proxy = new HangingProxy(() => kmsPort);
// PS256 is apart (its own describe below): local-kms signs PSS with the longest salt, not the digest's length AWS KMS and RFC 7518 use.
const ALGORITHMS: Algorithm[] = ['ES256', 'ES384', 'RS256'];
const file = join(dir, 'keys.json');

beforeAll(async () => {
  if (skip !== undefined) return;
  kmsPort = await freePort();
  port = await freePort();
  kms = await startLocalKms((found as { localKms: string }).localKms, kmsPort, join(dir, 'data'));
  await proxy.listen(port);
  // The SDK in this process reads the standard configuration, as a server would.
  Object.assign(process.env, kmsEnv(port));
  const kids = ALGORITHMS.flatMap((alg) => ['--alg', alg, '--kid', `kms-${alg}`]);
  // One --kms names one key: a file per algorithm, merged.
  const entries = [];
  for (const [index, alg] of ALGORITHMS.entries()) {
    const one = join(dir, `one-${alg}.json`);
    const made = await runCli(
      ['keys', 'generate', ...kids.slice(index * 4, index * 4 + 4), '--kms', `alias/jwt-${alg.toLowerCase()}`, '--out', one],
      { env: kmsEnv(port) },
    );
    expect(made.code, made.stderr).toBe(0);
    entries.push(...(JSON.parse(readFileSync(one, 'utf8')) as { keys: unknown[] }).keys);
  }
  const { writeKeyFile } = await import('../../src/keys/file.js');
  await writeKeyFile(file, entries as never, { exclusive: true });
}, 60_000);
afterEach(() => clients.closeAll());
afterAll(async () => {
  await closeAllServers(0);
  kms?.kill();
  await kms?.closed;
  await proxy.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(skip !== undefined)(`AWS KMS keys on local-kms${skip === undefined ? '' : ` (skipped: ${skip})`}`, () => {
  it('keys generate --kms writes the alias and the public key only', () => {
    const entries = (JSON.parse(readFileSync(file, 'utf8')) as { keys: Record<string, unknown>[] }).keys;
    expect(entries.map((entry) => entry['kms'])).toEqual(['alias/jwt-es256', 'alias/jwt-es384', 'alias/jwt-rs256']);
    for (const entry of entries) expect(['d', 'p', 'q'].some((member) => member in entry)).toBe(false);
  });

  describe.each(TRANSPORTS)('createJwtServer (%s)', (transport) => {
    it('signs through KMS; jose verifies every token with the served JWK Set', async () => {
      const keys = await loadKeys(file, { logger: silentLogger });
      const { port: served } = await startServer({ transport, keys });
      const client = clients.jwt(served);
      const jwks = jose.createLocalJWKSet(JSON.parse((await client.getJwks()).jwks_json));
      for (const alg of ALGORITHMS) {
        const issued = await client.generateJwt({ subject: 'ada', algorithm: alg });
        expect(issued.kid).toBe(`kms-${alg}`);
        expect((await jose.jwtVerify(issued.jwt, jwks, { algorithms: [alg] })).payload.sub).toBe('ada');
      }
    });
  });

  it('with KMS gone: UNAVAILABLE within the deadline, the detail logged only, verification unharmed, signing back when KMS is', async () => {
    const keys = await loadKeys(file, { logger: silentLogger });
    const logger = recordingLogger();
    const { port: served } = await startServer({ transport: 'http2', keys, keyBackendTimeoutMs: 1500, logger });
    const client = clients.jwt(served);
    const before = await client.generateJwt({ subject: 'ada', algorithm: 'ES256' });
    kms?.kill();
    await kms?.closed;
    const started = Date.now();
    const failure = await callError(client.generateJwt({ subject: 'ada', algorithm: 'ES256' }));
    expect(failure).toMatchObject({ code: status.UNAVAILABLE, details: KEY_BACKEND_UNAVAILABLE_MESSAGE });
    expect(warnings(logger).at(-1)).toMatch(/^key kms-ES256 \(kms\) cannot sign: /);
    expect(Date.now() - started).toBeLessThan(1500 + 1000);
    expect((await client.verifyJwt({ jwt: before.jwt })).valid).toBe(true);
    expect((await client.getJwks()).jwks_json).toContain('kms-ES256');
    kms = await startLocalKms((found as { localKms: string }).localKms, kmsPort, join(dir, 'data'));
    expect((await client.generateJwt({ subject: 'ada', algorithm: 'ES256' })).kid).toBe('kms-ES256');
  });

  describe('a KMS that accepts connections and never answers', () => {
    afterEach(() => {
      proxy.paused = false;
    });

    it('stops loadKeys and `serve` within keyBackendTimeoutMs, naming the key', async () => {
      proxy.pause();
      const started = Date.now();
      const loading = loadKeys(file, { logger: silentLogger, keyBackendTimeoutMs: 500 });
      await expect(loading).rejects.toMatchObject({
        code: 'ERR_INVALID_KEY',
        message: 'key kms-ES256 (kms) cannot sign: the backend did not open the key within 500 ms (option keyBackendTimeoutMs)',
      });
      expect(Date.now() - started).toBeLessThan(500 + 1500);
      const served = await runCli(['serve', '--host', '127.0.0.1', '--port', '0', '--keys', file, '--key-backend-timeout-ms', '500'], {
        env: kmsEnv(port),
        timeoutMs: 15_000,
      });
      expect(served.code).not.toBe(0);
      expect(served.stderr).toContain('key kms-ES256 (kms) cannot sign: the backend did not open the key within 500 ms');
    });

    it('in service: every call UNAVAILABLE within the deadline, NOT_SERVING; signs again within one breaker interval of KMS answering, its hung sockets given up', async () => {
      const keys = await loadKeys(file, { logger: silentLogger, keyBackendTimeoutMs: 800 });
      const { port: served } = await startServer({ transport: 'http2', keys, keyBackendTimeoutMs: 800, health: true });
      const client = clients.jwt(served);
      await client.generateJwt({ subject: 'ada', algorithm: 'ES256' });
      proxy.pause();
      // The idle keep-alive connections of every KMS client in this process, held from now on.
      const idle = proxy.held.size;
      let hung = idle;
      const watch = setInterval(() => {
        hung = Math.max(hung, proxy.held.size);
      }, 10);
      const started = Date.now();
      // More than the SDK's 50 sockets: each hung request must give its socket up.
      const failures = await Promise.all(
        Array.from({ length: 60 }, () => callError(client.generateJwt({ subject: 'ada', algorithm: 'ES256' }))),
      );
      expect(Date.now() - started).toBeLessThan(800 + 1500);
      expect(new Set(failures.map((failure) => `${failure.code} ${failure.details}`))).toEqual(
        new Set([`${status.UNAVAILABLE} ${KEY_BACKEND_UNAVAILABLE_MESSAGE}`]),
      );
      expect(await healthCheck(served, 'jwt.services.JwtService')).toBe('NOT_SERVING');
      clearInterval(watch);
      proxy.paused = false;
      const back = Date.now();
      const signs = async (): Promise<boolean> =>
        (await client.generateJwt({ subject: 'ada', algorithm: 'ES256' }).catch(() => undefined))?.kid === 'kms-ES256';
      expect(await waitUntil(signs, KEY_BACKEND_BREAKER_COOLDOWN_MS + 2000, 100)).toBe(true);
      expect(Date.now() - back).toBeLessThan(KEY_BACKEND_BREAKER_COOLDOWN_MS + 2000);
      // The requests that hung gave their sockets up: none is left to queue new requests behind.
      expect(hung).toBeGreaterThan(idle);
      expect(await waitUntil(() => proxy.held.size <= idle, 2000)).toBe(true);
      expect(await healthCheck(served, 'jwt.services.JwtService')).toBe('SERVING');
    }, 30_000);
  });

  describe('a key named by its alias', () => {
    it('is pinned to its ARN: an alias moved keeps signing with the key published, is refused at reload, and KMS errors never reach the caller', async () => {
      const sdk = await import('@aws-sdk/client-kms');
      const kmsApi = new sdk.KMSClient({});
      const make = async (): Promise<{ keyId: string; jwk: Record<string, unknown> }> => {
        const created = await kmsApi.send(new sdk.CreateKeyCommand({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' }));
        const keyId = created.KeyMetadata?.KeyId as string;
        const answer = await kmsApi.send(new sdk.GetPublicKeyCommand({ KeyId: keyId }));
        return {
          keyId,
          jwk: createPublicKey({ key: Buffer.from(answer.PublicKey as Uint8Array), format: 'der', type: 'spki' }).export({
            format: 'jwk',
          }) as Record<string, unknown>,
        };
      };
      const first = await make();
      const second = await make();
      await kmsApi.send(new sdk.CreateAliasCommand({ AliasName: 'alias/jwt-moving', TargetKeyId: first.keyId }));
      const moving = join(dir, 'moving.json');
      writeFileSync(moving, JSON.stringify({ keys: [{ kid: 'kms-moving', alg: 'ES256', kms: 'alias/jwt-moving', ...first.jwk }] }), {
        mode: 0o600,
      });
      const logger = recordingLogger();
      const { port: served } = await startServer({ transport: 'http2', keys: await loadKeys(moving, { logger: silentLogger }), logger });
      const client = clients.jwt(served);
      const jwks = jose.createLocalJWKSet(JSON.parse((await client.getJwks()).jwks_json));
      await kmsApi.send(new sdk.UpdateAliasCommand({ AliasName: 'alias/jwt-moving', TargetKeyId: second.keyId }));
      const issued = await client.generateJwt({ subject: 'ada', algorithm: 'ES256' });
      expect((await jose.jwtVerify(issued.jwt, jwks, { algorithms: ['ES256'] })).payload.sub).toBe('ada');
      await expect(loadKeys(moving, { logger: silentLogger })).rejects.toThrow(
        /^key kms-moving: the kms key alias\/jwt-moving \(now arn:aws:kms:[^)]+\) is not the public key the key file holds$/,
      );
      // A KMS error names the account and the key ARN: the log has it, the caller does not.
      await kmsApi.send(new sdk.DisableKeyCommand({ KeyId: first.keyId }));
      const failure = await callError(client.generateJwt({ subject: 'ada', algorithm: 'ES256' }));
      expect(failure).toMatchObject({ code: status.UNAVAILABLE, details: KEY_BACKEND_UNAVAILABLE_MESSAGE });
      const logged = warnings(logger).at(-1) ?? '';
      expect(logged).toMatch(/^key kms-moving \(kms\) cannot sign: /);
      expect(logged).toContain(first.keyId);
      expect(logged).toContain('111122223333');
      for (const secretish of [first.keyId, '111122223333', 'arn:']) expect(JSON.stringify(failure)).not.toContain(secretish);
    });
  });
});

/**
 * PS256 (RFC 7518 section 3.5) is RSASSA-PSS with SHA-256, MGF1-SHA-256 and a 32-byte salt;
 * AWS KMS documents RSASSA_PSS_SHA_256 with a 256-bit salt. local-kms signs with Go's
 * rsa.SignPSS(..., nil), the longest salt (222 bytes for RSA-2048), which neither jose nor
 * our verifier accepts as PS256: the backend refuses such a key at open, with the salt it saw.
 */
describe.skipIf(skip !== undefined)('PS256 through local-kms', () => {
  /** A fresh RSA_2048 SIGN_VERIFY key in local-kms, made with the SDK; its id and public key. */
  async function rsaKey(): Promise<{
    keyId: string;
    spki: Buffer;
    client: import('@aws-sdk/client-kms').KMSClient;
    sdk: typeof import('@aws-sdk/client-kms');
  }> {
    const sdk = await import('@aws-sdk/client-kms');
    const client = new sdk.KMSClient({});
    const created = await client.send(new sdk.CreateKeyCommand({ KeySpec: 'RSA_2048', KeyUsage: 'SIGN_VERIFY' }));
    const keyId = created.KeyMetadata?.KeyId as string;
    const answer = await client.send(new sdk.GetPublicKeyCommand({ KeyId: keyId }));
    return { keyId, spki: Buffer.from(answer.PublicKey as Uint8Array), client, sdk };
  }

  it('local-kms signs RSASSA_PSS_SHA_256 with the longest salt: jose and our PS256 verifier reject it', async () => {
    const { keyId, spki, client, sdk } = await rsaKey();
    const publicKey = createPublicKey({ key: spki, format: 'der', type: 'spki' });
    const jwk = publicKey.export({ format: 'jwk' });
    const input = `${Buffer.from(JSON.stringify({ alg: 'PS256', typ: 'JWT', kid: 'pss' })).toString('base64url')}.${Buffer.from(JSON.stringify({ sub: 'ada@example.com', exp: 4102444800 })).toString('base64url')}`;
    const signed = await client.send(
      new sdk.SignCommand({
        KeyId: keyId,
        Message: createHash('sha256').update(input).digest(),
        MessageType: 'DIGEST',
        SigningAlgorithm: 'RSASSA_PSS_SHA_256',
      }),
    );
    const signature = Buffer.from(signed.Signature as Uint8Array);
    const pss = (saltLength: number): boolean =>
      cryptoVerify('sha256', Buffer.from(input), { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength }, signature);
    // The evidence: valid PSS, with a 222-byte salt (256 - 32 - 2), not PS256's 32.
    expect(pss(222)).toBe(true);
    expect(pss(32)).toBe(false);
    const token = `${input}.${signature.toString('base64url')}`;
    await expect(jose.compactVerify(token, await jose.importJWK({ ...jwk, alg: 'PS256' }, 'PS256'))).rejects.toThrow(
      /signature verification failed/,
    );
    const verifier = createVerifier(importKeys({ keys: [{ kid: 'pss', alg: 'PS256', ...jwk }] }), { audience: ANY_AUDIENCE });
    expect(verifier.verify(token)).toMatchObject({ valid: false, reason: 'BAD_SIGNATURE' });
  });

  it('a PS256 kms key whose service signs with another salt is refused at load, naming the salt', async () => {
    const { keyId, spki } = await rsaKey();
    const entry = {
      kid: 'kms-ps256',
      alg: 'PS256',
      kms: keyId,
      ...createPublicKey({ key: spki, format: 'der', type: 'spki' }).export({ format: 'jwk' }),
    };
    const one = join(dir, 'ps256.json');
    writeFileSync(one, JSON.stringify({ keys: [entry] }), { mode: 0o600 });
    const loaded = loadKeys(one, { logger: silentLogger });
    await expect(loaded).rejects.toBeInstanceOf(JwtGrpcError);
    await expect(loaded).rejects.toMatchObject({ code: 'ERR_INVALID_KEY' });
    await expect(loaded).rejects.toThrow(
      `key kms-ps256: kms key ${keyId}: signs RSASSA_PSS_SHA_256 with the longest salt (222 bytes); PS256 needs a 32-byte salt (RFC 7518 section 3.5), as AWS KMS uses (local-kms does not)`,
    );
  });
});
