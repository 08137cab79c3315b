import { createSecretKey, generateKeyPairSync, type JsonWebKey, type KeyObject, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchAlgorithm } from '../options/algorithms.js';

/** The run's private key file, shared by every server, and how to delete it. */
export interface KeysFile {
  readonly path: string;
  remove(): void;
}

function privateKeyFor(alg: BenchAlgorithm): KeyObject {
  switch (alg) {
    case 'HS256':
      return createSecretKey(randomBytes(32));
    case 'ES256':
      return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    case 'RS256':
      return generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    case 'EdDSA':
      return generateKeyPairSync('ed25519').privateKey;
  }
}

/** A private JWK Set with one key per algorithm, each with kid and alg. */
export function generateJwks(algorithms: readonly BenchAlgorithm[]): { keys: (JsonWebKey & { kid: string; alg: string })[] } {
  return {
    keys: algorithms.map((alg) => ({
      ...privateKeyFor(alg).export({ format: 'jwk' }),
      kid: `bench-${alg.toLowerCase()}-${randomBytes(4).toString('hex')}`,
      alg,
    })),
  };
}

/**
 * Writes fresh keys to `<tmp>/jwt-grpc-bench-XXXXXX/keys.json`: the directory is created
 * 0700 by mkdtemp and the file 0600, because these are private keys. They are made per
 * run and never copied into the results.
 */
export function writeKeysFile(algorithms: readonly BenchAlgorithm[]): KeysFile {
  const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-bench-'));
  const path = join(dir, 'keys.json');
  writeFileSync(path, JSON.stringify(generateJwks(algorithms)), { mode: 0o600 });
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
