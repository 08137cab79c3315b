import { randomBytes } from 'node:crypto';
import { type Algorithm, ALGORITHMS, ALGORITHM_SPECS, isAlgorithm } from '../algorithms/index.js';
import { JwtGrpcError } from '../base/errors.js';
import { optionNames, refuseUnknownOptions } from '../base/known-options.js';
import { type KeyEntry, KeySet } from './key-set.js';

/**
 * A new kid for `alg`: the algorithm, the UTC date and 32 random bits in hex, e.g.
 * `es256-20261123-9f3a6c2e`: readable in logs and key files, sortable by age within an
 * algorithm, and unique without coordination. @internal
 */
export function newKid(alg: Algorithm, now = new Date()): string {
  const day = now.toISOString().slice(0, 10).replaceAll('-', '');
  return `${alg.toLowerCase()}-${day}-${randomBytes(4).toString('hex')}`;
}

async function generateOne(alg: Algorithm): Promise<KeyEntry> {
  const spec = ALGORITHM_SPECS[alg];
  return { kid: newKid(alg), alg, spec, ...(await spec.generate()) };
}

/** The one name generateKeys' options hold. */
const GENERATE_OPTION_NAMES = optionNames<NonNullable<Parameters<typeof generateKeys>[0]>>({ algorithms: true });

/**
 * Generates one fresh key per algorithm (default: all of {@link ALGORITHMS}), in memory.
 * Kids are the algorithm, the date and a random part, e.g. `es256-20261123-9f3a6c2e`.
 *
 * @example
 * ```ts
 * const keys = await generateKeys({ algorithms: ['HS256', 'ES256'] });
 * keys.signingAlgorithms; // ['HS256', 'ES256']
 * ```
 */
export async function generateKeys(options: { algorithms?: readonly string[] } = {}): Promise<KeySet> {
  refuseUnknownOptions(options, GENERATE_OPTION_NAMES, { owner: 'generateKeys' });
  const algorithms = options.algorithms ?? ALGORITHMS;
  if (!Array.isArray(algorithms) || algorithms.length === 0) {
    throw new JwtGrpcError('ERR_INVALID_OPTION', 'option algorithms: a non-empty list is required', {
      field: 'algorithms',
    });
  }
  for (const alg of algorithms) {
    if (!isAlgorithm(alg)) {
      throw new JwtGrpcError('ERR_INVALID_OPTION', `option algorithms: ${JSON.stringify(alg)} is not one of ${ALGORITHMS.join(', ')}`, {
        field: 'algorithms',
      });
    }
  }
  return new KeySet(await Promise.all([...new Set(algorithms as Algorithm[])].map(generateOne)));
}
