/**
 * AWS KMS keys against local-kms (a pinned Go tool): made by `keys generate --kms alias/...`,
 * served on both transports (ES256, ES384, RS256, checked by jose from the served JWK Set);
 * with KMS gone, GenerateJwt answers UNAVAILABLE naming the key within the deadline while
 * VerifyJwt and GetJwks keep working, and signing comes back when KMS does, without a restart.
 * PS256: local-kms's PSS salt is not PS256's, so a PS256 key is refused at load, naming the salt.
 */
import { constants, createHash, createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import * as jose from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../bench/kit/cli.js';
import type { LaunchedProcess } from '../../bench/kit/launcher.js';
import { ANY_AUDIENCE, type Algorithm, JwtGrpcError, createVerifier, importKeys, loadKeys, silentLogger } from '../../src/lib.js';
import { callError, ClientPool } from '../../bench/kit/grpc-clients.js';
import { TRANSPORTS, closeAllServers, startServer } from '../../bench/kit/jwt-servers.js';
import { findLocalKms, kmsEnv, startLocalKms } from '../../bench/kit/hsm.js';
import { freePort } from '../../bench/kit/ports.js';

const found = findLocalKms();
const skip = 'skip' in found ? found.skip : undefined;
const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-kms-'));
const clients = new ClientPool();
let kms: LaunchedProcess | undefined;
let port = 0;
// PS256 is apart (its own describe below): local-kms signs PSS with the longest salt, not the digest's length AWS KMS and RFC 7518 use.
const ALGORITHMS: Algorithm[] = ['ES256', 'ES384', 'RS256'];
const file = join(dir, 'keys.json');

beforeAll(async () => {
  if (skip !== undefined) return;
  port = await freePort();
  kms = await startLocalKms((found as { localKms: string }).localKms, port, join(dir, 'data'));
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

  it('with KMS gone: UNAVAILABLE naming the key within the deadline, verification unharmed, signing back when KMS is', async () => {
    const keys = await loadKeys(file, { logger: silentLogger });
    const { port: served } = await startServer({ transport: 'http2', keys, keyBackendTimeoutMs: 1500 });
    const client = clients.jwt(served);
    const before = await client.generateJwt({ subject: 'ada', algorithm: 'ES256' });
    kms?.kill();
    await kms?.closed;
    const started = Date.now();
    const failure = await callError(client.generateJwt({ subject: 'ada', algorithm: 'ES256' }));
    expect(failure.code).toBe(status.UNAVAILABLE);
    expect(failure.details).toMatch(/^key kms-ES256 \(kms\) cannot sign: /);
    expect(Date.now() - started).toBeLessThan(1500 + 1000);
    expect((await client.verifyJwt({ jwt: before.jwt })).valid).toBe(true);
    expect((await client.getJwks()).jwks_json).toContain('kms-ES256');
    kms = await startLocalKms((found as { localKms: string }).localKms, port, join(dir, 'data'));
    expect((await client.generateJwt({ subject: 'ada', algorithm: 'ES256' })).kid).toBe('kms-ES256');
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
