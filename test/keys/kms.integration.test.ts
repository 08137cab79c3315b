/**
 * AWS KMS keys against local-kms (a pinned Go tool): made by `keys generate --kms alias/...`,
 * served on both transports (ES256, ES384, RS256, checked by jose from the served JWK Set);
 * with KMS gone, GenerateJwt answers UNAVAILABLE naming the key within the deadline while
 * VerifyJwt and GetJwks keep working, and signing comes back when KMS does, without a restart.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import * as jose from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../bench/kit/cli.js';
import type { LaunchedProcess } from '../../bench/kit/launcher.js';
import { type Algorithm, loadKeys, silentLogger } from '../../src/lib.js';
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
// PS256 is left out: local-kms signs PSS with the longest salt, not the digest's length AWS KMS and RFC 7518 use.
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
    const made = await runCli(['keys', 'generate', ...kids.slice(index * 4, index * 4 + 4), '--kms', `alias/jwt-${alg.toLowerCase()}`, '--out', one], { env: kmsEnv(port) });
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
