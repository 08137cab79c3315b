import type { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';

/**
 * A strong ETag of `body`: a digest of its bytes, so it changes exactly when the bytes
 * change, in every process that serves them (cluster workers agree without talking). @internal
 */
export function strongEtag(body: Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

/**
 * Whether an `If-None-Match` header matches `etag`: `*`, or any listed tag under the weak
 * comparison RFC 9110 section 13.1.2 prescribes for this header (`W/` is ignored). @internal
 */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const opaque = etag.slice(1, -1);
  for (const part of header.split(',')) {
    const tag = part.trim();
    const bare = tag.startsWith('W/') ? tag.slice(2) : tag;
    if (bare.length >= 2 && bare.startsWith('"') && bare.endsWith('"') && bare.slice(1, -1) === opaque) return true;
  }
  return false;
}
