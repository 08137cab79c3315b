import { type KeyObject, generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import type { JwkMembers } from './jwk.js';
import type { AlgorithmSpec } from './spec.js';

/** node:crypto's key pair generator, as a promise (its documented promisified overloads). */
export const generatePair = promisify(generateKeyPair);

/** A KeyObject's JWK as node:crypto exports it (it always sets kty). */
export function exportJwk(key: KeyObject): JwkMembers {
  return key.export({ format: 'jwk' }) as JwkMembers;
}

/** The members of an asymmetric key's JWK that a verifier needs: never d, p, q, dp, dq, qi. */
const PUBLIC_MEMBERS = ['kty', 'crv', 'x', 'y', 'n', 'e'] as const;

/** JWK export of every asymmetric family (EC, RSA, OKP): the public key is published, the pair travels whole. */
export const asymmetricJwk: Pick<AlgorithmSpec, 'publicJwk' | 'fullJwk'> = {
  publicJwk(key) {
    const jwk = exportJwk(key);
    const members: JwkMembers = { kty: jwk.kty };
    for (const name of PUBLIC_MEMBERS) if (jwk[name] !== undefined) members[name] = jwk[name];
    return members;
  },
  fullJwk: (signingKey, verificationKey) => exportJwk(signingKey ?? verificationKey),
};
