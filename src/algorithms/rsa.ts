import { type KeyObject, constants, sign as cryptoSign, verify as cryptoVerify } from 'node:crypto';
import { asymmetricJwk, generatePair } from './key-pair.js';
import type { AlgorithmSpec } from './spec.js';

/** Smallest RSA modulus accepted, in bits ([RFC 7518 §3.3](https://www.rfc-editor.org/rfc/rfc7518#section-3.3) requires 2048). */
const MIN_RSA_BITS = 2048;

/** Key check and generation shared by RS256 and PS256: a plain RSA key serves both, the padding is per signature. */
const rsaKey: Pick<AlgorithmSpec, 'symmetric' | 'checkKey' | 'generate' | 'publicJwk' | 'fullJwk'> = {
  symmetric: false,
  checkKey(key) {
    if (key.asymmetricKeyType !== 'rsa') return 'needs an RSA key';
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    return bits < MIN_RSA_BITS ? `needs an RSA modulus of at least ${MIN_RSA_BITS} bits, got ${bits}` : undefined;
  },
  async generate() {
    const { privateKey, publicKey } = await generatePair('rsa', { modulusLength: MIN_RSA_BITS });
    return { signingKey: privateKey, verificationKey: publicKey };
  },
  ...asymmetricJwk,
};

/** RS256 (RFC 7518 §3.3): RSASSA-PKCS1-v1_5 with `hash`. */
export function rsa(hash: string): AlgorithmSpec {
  return {
    ...rsaKey,
    prepareSign: (key) => (input) => cryptoSign(hash, Buffer.from(input), key).toString('base64url'),
    prepareVerify: (key) => (input, signature) => cryptoVerify(hash, Buffer.from(input), key, Buffer.from(signature, 'base64url')),
  };
}

/** PS256 (RFC 7518 §3.5): RSASSA-PSS with `hash` and MGF1, the salt as long as the hash output. */
export function rsaPss(hash: string, hashBytes: number): AlgorithmSpec {
  const pss = (key: KeyObject) => ({ key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: hashBytes });
  return {
    ...rsaKey,
    prepareSign: (key) => {
      const options = pss(key);
      return (input) => cryptoSign(hash, Buffer.from(input), options).toString('base64url');
    },
    prepareVerify: (key) => {
      const options = pss(key);
      return (input, signature) => cryptoVerify(hash, Buffer.from(input), options, Buffer.from(signature, 'base64url'));
    },
  };
}
