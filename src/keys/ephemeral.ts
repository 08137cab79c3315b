import type { Logger } from '../base/log.js';
import { generateKeys } from './generate.js';
import type { KeySet } from './key-set.js';

/**
 * Keys for a server started without any: one fresh key per algorithm, announced as a
 * warning with the kids (never the keys), because every token they sign stops verifying
 * when the process (or the cluster) restarts. @internal
 */
export async function generateEphemeralKeys(logger: Logger): Promise<KeySet> {
  const keys = await generateKeys();
  logger.warn(
    'no keys configured: generated EPHEMERAL keys in memory; tokens will not verify after a restart ' +
      'or on another instance. Configure keys for production.',
    { kids: keys.keys.map((key) => key.kid) },
  );
  return keys;
}
