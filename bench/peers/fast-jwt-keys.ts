// What both fast-jwt peers share (node-fast-jwt over gRPC, node-rest over HTTP/1.1): the
// keys file turned into fast-jwt signers and verifiers, made once at start, and the subject pool.
import { createPrivateKey, createPublicKey, type JsonWebKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSigner, createVerifier, type Algorithm } from 'fast-jwt';

export const TTL_SECONDS = 7200;

export type Sign = (payload: Record<string, unknown>) => string;
export type Verify = (token: string) => { sub?: unknown };
export interface Signer {
  kid: string;
  sign: Sign;
  verify: Verify;
}

// Builds the signers (alg -> first key of that alg) and verifiers (kid -> key)
// from the JWK Set; each signer is tried once so a bad key fails at start.
export function loadKeys(path: string) {
  const { keys } = JSON.parse(readFileSync(path, 'utf8')) as { keys?: (JsonWebKey & { kid?: string; alg?: string })[] };
  if (!Array.isArray(keys) || keys.length === 0) throw new Error(`${path}: no keys`);
  const signers = new Map<string, Signer>();
  const verifiers = new Map<string, Verify>();
  for (const jwk of keys) {
    const { kid, alg } = jwk;
    if (!kid || !alg || alg === 'none') throw new Error(`${path}: every key needs kid and alg`);
    if (verifiers.has(kid)) throw new Error(`${path}: duplicate kid ${kid}`);
    let privateKey: string | Buffer, publicKey: string | Buffer;
    if (jwk.kty === 'oct') {
      if (!jwk.k) throw new Error(`${path}: ${kid}: missing k`);
      privateKey = publicKey = Buffer.from(jwk.k, 'base64url');
    } else {
      const keyObject = createPrivateKey({ key: jwk, format: 'jwk' });
      privateKey = String(keyObject.export({ type: 'pkcs8', format: 'pem' }));
      publicKey = String(createPublicKey(keyObject).export({ type: 'spki', format: 'pem' }));
    }
    const algorithm = alg as Algorithm;
    const verify: Verify = createVerifier({ key: publicKey, algorithms: [algorithm] });
    verifiers.set(kid, verify);
    if (!signers.has(alg)) {
      const sign: Sign = createSigner({ key: privateKey, algorithm, kid });
      if (verify(sign({ sub: 'self-test' })).sub !== 'self-test') throw new Error(`${kid}: self-test failed`);
      signers.set(alg, { kid, sign, verify });
    }
  }
  return { signers, verifiers };
}

export function loadSubjects(path: string): string[] {
  const subjects: unknown = JSON.parse(readFileSync(path, 'utf8'));
  if (!Array.isArray(subjects) || subjects.length === 0 || !subjects.every((s) => typeof s === 'string')) {
    throw new Error(`${path}: want a non-empty JSON array of strings`);
  }
  return subjects;
}
