import { generateKeyPair, randomBytes, createSecretKey, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { type Algorithm, ALGORITHMS, ALGORITHM_SPECS, isAlgorithm } from '../algorithms.js';
import { JwtGrpcError } from '../errors.js';
import { type KeyEntry, KeySet } from './key-set.js';

const generatePair = promisify(generateKeyPair);

async function generateOne(alg: Algorithm): Promise<KeyEntry> {
  const spec = ALGORITHM_SPECS[alg];
  const kid = `${alg.toLowerCase()}-${randomBytes(6).toString('base64url')}`;
  let signingKey: KeyObject;
  let verificationKey: KeyObject;
  switch (spec.family) {
    case 'hmac':
      signingKey = verificationKey = createSecretKey(randomBytes(spec.hashBytes));
      return { kid, alg, spec, signingKey, verificationKey };
    case 'ecdsa':
      ({ privateKey: signingKey, publicKey: verificationKey } = await generatePair('ec', {
        namedCurve: spec.curve === 'P-256' ? 'prime256v1' : 'secp384r1',
      }));
      break;
    case 'rsa':
    case 'rsa-pss':
      // A plain RSA key serves PS256 too: the padding is chosen per signature.
      ({ privateKey: signingKey, publicKey: verificationKey } = await generatePair('rsa', { modulusLength: 2048 }));
      break;
    case 'eddsa':
      ({ privateKey: signingKey, publicKey: verificationKey } = await generatePair('ed25519'));
      break;
  }
  return { kid, alg, spec, signingKey, verificationKey };
}

/**
 * Generates one fresh key per algorithm (default: all of {@link ALGORITHMS}), in memory.
 * Kids are the algorithm plus a random suffix, e.g. `es256-Xq3v1b9k`.
 *
 * @example
 * ```ts
 * const keys = await generateKeys({ algorithms: ['HS256', 'ES256'] });
 * keys.signingAlgorithms; // ['HS256', 'ES256']
 * ```
 */
export async function generateKeys(options: { algorithms?: readonly string[] } = {}): Promise<KeySet> {
  const algorithms = options.algorithms ?? ALGORITHMS;
  if (!Array.isArray(algorithms) || algorithms.length === 0) {
    throw new JwtGrpcError('ERR_INVALID_OPTION', 'option algorithms: a non-empty list is required', {
      field: 'algorithms',
    });
  }
  for (const alg of algorithms) {
    if (!isAlgorithm(alg)) {
      throw new JwtGrpcError(
        'ERR_INVALID_OPTION',
        `option algorithms: ${JSON.stringify(alg)} is not one of ${ALGORITHMS.join(', ')}`,
        { field: 'algorithms' },
      );
    }
  }
  return new KeySet(await Promise.all([...new Set(algorithms as Algorithm[])].map(generateOne)));
}
