/**
 * The key backends jwt-grpc ships. Registering one loads nothing: each loads its npm
 * package (an optional peer dependency) when a key first opens through it.
 */
import { keyBackend, registerKeyBackend } from '../backend.js';
import { kmsBackend } from './kms.js';
import { pkcs11Backend } from './pkcs11.js';

/**
 * Registers PKCS#11 (`pkcs11`) and AWS KMS (`kms`), once; a backend registered earlier under the same member stays. @internal
 *
 * @example
 * ```ts
 * registerBuiltinBackends();
 * ```
 */
export function registerBuiltinBackends(): void {
  for (const backend of [pkcs11Backend, kmsBackend]) if (keyBackend(backend.member) === undefined) registerKeyBackend(backend);
}
