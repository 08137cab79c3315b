import { sign as cryptoSign, verify as cryptoVerify } from 'node:crypto';
import { asymmetricJwk, generatePair } from './key-pair.js';
import type { AlgorithmSpec } from './spec.js';

/** EdDSA ([RFC 8037](https://www.rfc-editor.org/rfc/rfc8037)) on Ed25519: the curve fixes the hash, so node:crypto takes none. */
export function eddsa(): AlgorithmSpec {
  return {
    symmetric: false,
    prepareSign: (key) => (input) => cryptoSign(null, Buffer.from(input), key).toString('base64url'),
    prepareVerify: (key) => (input, signature) => cryptoVerify(null, Buffer.from(input), key, Buffer.from(signature, 'base64url')),
    checkKey: (key) => (key.asymmetricKeyType === 'ed25519' ? undefined : 'needs an Ed25519 (OKP) key'),
    async generate() {
      const { privateKey, publicKey } = await generatePair('ed25519');
      return { signingKey: privateKey, verificationKey: publicKey };
    },
    ...asymmetricJwk,
  };
}
