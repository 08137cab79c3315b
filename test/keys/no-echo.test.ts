/**
 * A secret pasted into the wrong member of a key file entry is never repeated: for every
 * member of every kind of entry (oct, EC and RSA JWKs, inline PEM, pemFile, and a member the
 * loader does not know), a private key's `d` put there makes loadKeys fail or load, and its
 * error and everything logged name the member's place (`keys[1].alg`) but never the value.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Logger, loadKeys } from '../../src/lib/index.js';

const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
/** What a careless paste would put in the wrong place: a real private scalar. */
const SECRET = ec.export({ format: 'jwk' }).d as string;

const signer = { ...ec.export({ format: 'jwk' }), kid: 'signer', alg: 'ES256' };
const ENTRIES: Record<string, Record<string, unknown>> = {
  oct: {
    kty: 'oct',
    k: randomBytes(32).toString('base64url'),
    kid: 'mac',
    alg: 'HS256',
    use: 'sig',
    key_ops: ['sign', 'verify'],
    deactivated_at: '2026-11-23T10:15:00Z',
  },
  ec: { ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }), kid: 'ec', alg: 'ES256', use: 'sig' },
  rsa: { ...rsa.export({ format: 'jwk' }), kid: 'rsa', alg: 'RS256' },
  pem: { kid: 'pem', alg: 'RS256', pem: rsa.export({ type: 'pkcs8', format: 'pem' }) as string },
  pemFile: { kid: 'pem-file', alg: 'RS256', pemFile: 'rsa.pem' },
};

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'jwt-grpc-no-echo-'));
  await writeFile(join(dir, 'rsa.pem'), ENTRIES['pem']?.['pem'] as string, { mode: 0o600 });
});

afterAll(() => rm(dir, { recursive: true, force: true }));

function recording(): Logger & { text(): string } {
  const lines: string[] = [];
  const at = (message: string, fields?: unknown) => void lines.push(message, JSON.stringify(fields ?? null));
  return { info: at, warn: at, error: at, text: () => lines.join('\n') };
}

/** Every case: an entry kind, and the member (present or not, `note` unknown to the loader) given the secret. */
const CASES = Object.entries(ENTRIES).flatMap(([kind, entry]) =>
  [...new Set([...Object.keys(entry), 'kid', 'alg', 'kty', 'deactivated_at', 'pemFile', 'pem', 'note'])].map(
    (member) => [kind, member] as const,
  ),
);

describe('a secret in the wrong member of a key file entry', () => {
  it.each(CASES)('%s entry, secret in %s: named by place, never repeated', async (kind, member) => {
    const entry = { ...ENTRIES[kind], [member]: SECRET };
    // A kid that loads is public (GetJwks lists it): the failure that would quote it is a kid given twice.
    const keys = member === 'kid' ? [signer, entry, { ...entry }] : [signer, entry];
    const file = join(dir, `${kind}-${member}.json`);
    await writeFile(file, JSON.stringify({ keys }), { mode: 0o600 });
    const logger = recording();
    const outcome = await loadKeys(file, { logger }).then(
      () => 'loaded',
      (err: Error) => `${err.message}\n${String((err as { field?: unknown }).field)}\n${err.stack ?? ''}`,
    );
    expect(outcome).not.toContain(SECRET);
    expect(logger.text()).not.toContain(SECRET);
    if (outcome !== 'loaded') expect(outcome).toMatch(/keys\[[12]\]/);
  });

  it('node:crypto quoting a member (an unknown kty) is cut out too', async () => {
    const file = join(dir, 'kty-quoted.json');
    await writeFile(file, JSON.stringify({ keys: [signer, { ...ENTRIES['ec'], kty: SECRET }] }), { mode: 0o600 });
    await expect(loadKeys(file, { logger: recording() })).rejects.toThrow(/^keys\[1\]\.kty: is not one of EC, RSA, OKP, oct/);
  });
});
