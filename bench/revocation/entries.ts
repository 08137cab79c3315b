/**
 * Revocations as a server holds them, made up for the benchmark: realistic token ids (128
 * random bits, base64url: 22 characters, what `serve` puts in `jti`) with expiries spread
 * over the next hours, and the revocations file of docs/revocation.md ("The file") that
 * holds them. The revocation rows start on such a file, so that their set is not empty; the
 * memory measurement builds its million from the same entries.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { Revocation } from '../../src/contracts/revocation-store.js';

/** Entries in the file the `jwt-grpc-revocation` row starts on. */
export const REVOCATION_PRELOAD = 10_000;

/** A token id as `serve` makes them: 128 random bits, base64url (22 characters). */
export function benchJti(): string {
  return randomBytes(16).toString('base64url');
}

/**
 * The `i`th entry: a fresh jti, revoked until 1 to 2 hours after `nowS` (the default token
 * lifetime is 2 hours, so a revoked token lives at most that long), spread one second apart.
 */
export function benchRevocation(i: number, nowS: number): Revocation {
  return { jti: benchJti(), expiresAt: Math.floor(nowS) + 3600 + (i % 3600) };
}

/** One line of the revocations file (docs/revocation.md, "The file"). */
export function revocationLine(revocation: Revocation): string {
  return `${JSON.stringify({ jti: revocation.jti, expiresAt: revocation.expiresAt })}\n`;
}

/** Writes `count` entries to `path` (mode 0600) in the file's format; returns the bytes written. */
export function writeRevocationsFile(path: string, count: number, nowS = Date.now() / 1000): number {
  let text = '';
  for (let i = 0; i < count; i++) text += revocationLine(benchRevocation(i, nowS));
  writeFileSync(path, text, { mode: 0o600 });
  return Buffer.byteLength(text);
}
