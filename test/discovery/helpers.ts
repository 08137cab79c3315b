/** Shared by the discovery tests: a staged rotation through the public API (HTTP requests: bench/kit/http.ts). */
import { type Jwk, type KeySet, exportKeys, generateKeys, importKeys } from '../../src/lib/index.js';

/** A new private ES256 key as a key file holds it, verify-only (staged) or signing. */
export async function newEs256Jwk(staged: boolean): Promise<Jwk> {
  const jwk = exportKeys(await generateKeys({ algorithms: ['ES256'] }), { includePrivate: true }).keys[0] as Jwk;
  return staged ? { ...jwk, key_ops: ['verify'] } : jwk;
}

/**
 * The phases of a staged rotation of the ES256 key of `current`: `staged` publishes the new
 * key verify-only; `activated` signs with it and keeps the old one to verify.
 */
export async function stagedRotation(current: KeySet): Promise<{ staged: KeySet; activated: KeySet; newKid: string }> {
  const old = exportKeys(current, { includePrivate: true }).keys;
  const next = await newEs256Jwk(true);
  const staged = importKeys({ keys: [next, ...old] });
  const { key_ops: _ops, ...signing } = next;
  const activated = importKeys({ keys: [signing, ...old.map((jwk) => (jwk.alg === 'ES256' ? { ...jwk, key_ops: ['verify'] } : jwk))] });
  return { staged, activated, newKid: next.kid };
}
