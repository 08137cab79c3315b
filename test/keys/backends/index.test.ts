/** The shipped key backends (src/keys/backends/index.ts): pkcs11 and kms registered without loading their packages; one registered first stays. */
import { describe, expect, it } from 'vitest';
import { type KeyBackend, keyBackend, registerKeyBackend } from '../../../src/keys/backend.js';
import { registerBuiltinBackends } from '../../../src/keys/backends/index.js';

describe('registerBuiltinBackends', () => {
  it('registers pkcs11 and kms, keeping a backend registered earlier under the same member', () => {
    const own: KeyBackend = { member: 'kms', packageName: 'my-kms', open: async () => Promise.reject(new Error('unused')) };
    registerKeyBackend(own);
    registerBuiltinBackends();
    registerBuiltinBackends();
    expect(keyBackend('kms')).toBe(own);
    expect(keyBackend('pkcs11')).toMatchObject({ member: 'pkcs11', packageName: 'pkcs11js' });
  });
});
