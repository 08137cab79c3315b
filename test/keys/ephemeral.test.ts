/** Keys for a server started without any (src/keys/ephemeral.ts): one per algorithm, announced by kid in a warning that never carries material. */
import { describe, expect, it } from 'vitest';
import { generateEphemeralKeys } from '../../src/keys/ephemeral.js';
import { ALGORITHMS, exportKeys } from '../../src/lib/index.js';

describe('generateEphemeralKeys', () => {
  it('makes a signing key of every algorithm and warns once, naming the kids only', async () => {
    const warnings: { message: string; fields: unknown }[] = [];
    const keys = await generateEphemeralKeys({ info() {}, error() {}, warn: (message, fields) => void warnings.push({ message, fields }) });
    expect([...keys.signingAlgorithms].sort()).toEqual([...ALGORITHMS].sort());
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toMatch(/EPHEMERAL keys .* tokens will not verify after a restart/);
    expect(warnings[0]?.fields).toEqual({ kids: keys.keys.map((key) => key.kid) });
    const logged = JSON.stringify(warnings);
    for (const jwk of exportKeys(keys, { includePrivate: true }).keys) {
      for (const secret of [jwk.d, jwk.k]) if (secret !== undefined) expect(logged).not.toContain(secret);
    }
  });
});
