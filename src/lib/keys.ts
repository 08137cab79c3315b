/**
 * `jwt-grpc/keys`: signing keys. Generate them ({@link generateKeys}), load a JWK Set file
 * ({@link loadKeys}), import JWKs or PEM ({@link importKeys}), publish or save them
 * ({@link exportKeys}), rotate them in memory ({@link mergeKeySets}) or in their file, one
 * phase a call, as `jwt-grpc keys rotate` does ({@link rotateKeyFile}); the algorithms they sign with
 * ({@link ALGORITHMS}). A {@link KeySet} is what `jwt-grpc/tokens` and the server take.
 *
 * Loads no server, transport or client: a program that only handles keys pays for keys.
 *
 * @example
 * ```ts
 * import { exportKeys, generateKeys } from 'jwt-grpc/keys';
 *
 * const keys = await generateKeys({ algorithms: ['ES256'] });
 * console.log(JSON.stringify(exportKeys(keys)));
 * ```
 * @packageDocumentation
 * @module jwt-grpc/keys
 */
export { ALGORITHMS, type Algorithm, isAlgorithm } from '../algorithms/names.js';
export { KeySet, type KeyInfo } from '../keys/key-set.js';
export { generateKeys } from '../keys/generate.js';
export { mergeKeySets } from '../keys/merge.js';
export { rotateKeyFile, type KeyRotation, type KeyRotationStep, type RotateKeyFileOptions } from '../keys/rotate-file.js';
export { importKeys, type KeyInput } from '../keys/import.js';
export { type LoadKeysOptions, loadKeys } from '../keys/load.js';
export { setPkcs11ModuleDirs } from '../keys/backends/pkcs11-custody.js';
export { exportKeys, type Jwk } from '../keys/export.js';
