/**
 * Token ids (`jti`, RFC 7519 section 4.1.7): 128 random bits, base64url (22 characters),
 * what RevokeJwt names a token by. Drawn from a pooled buffer refilled 256 ids at a time:
 * one `randomFillSync` per 256 tokens instead of a `randomBytes` call (and its Buffer) per
 * token, on the GenerateJwt path.
 */
import { Buffer } from 'node:buffer';
import { randomFillSync } from 'node:crypto';

const ID_BYTES = 16;
const IDS_PER_FILL = 256;

const pool = Buffer.alloc(ID_BYTES * IDS_PER_FILL);
/** Offset of the next unused id; at the end, the pool is refilled. */
let offset = pool.length;

/** A fresh random token id: 16 bytes from the CSPRNG, base64url. @internal */
export function newJti(): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString('base64url', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return id;
}
