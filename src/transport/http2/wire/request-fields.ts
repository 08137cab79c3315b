/**
 * RFC 9113 §8.2-8.3: what makes a request's header list well-formed. A malformed one is
 * a stream error (PROTOCOL_ERROR); this module only decides.
 */
import type { RequestHeaders } from './stream.js';

const REQUEST_PSEUDO_HEADERS = new Set([':method', ':scheme', ':path', ':authority']);
/** §8.2.2: connection-specific fields have no place in HTTP/2. */
const CONNECTION_SPECIFIC = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

function hasUppercase(name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i);
    if (code >= 65 && code <= 90) return true;
  }
  return false;
}

/**
 * The request headers by name from a decoded list (name, value, ...), or undefined when
 * the list is malformed: an uppercase name, an unknown, repeated or late pseudo-header,
 * a connection-specific field, `te` other than "trailers", or a missing :method, :scheme
 * or :path. A repeated regular name has its values joined with ", ".
 */
export function validateRequestFields(fields: readonly string[]): RequestHeaders | undefined {
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  let regularSeen = false;
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i] as string;
    const value = fields[i + 1] as string;
    if (hasUppercase(name)) return undefined;
    if (name.charCodeAt(0) === 58 /* ':' */) {
      if (regularSeen || !REQUEST_PSEUDO_HEADERS.has(name) || headers[name] !== undefined) return undefined;
      headers[name] = value;
      continue;
    }
    regularSeen = true;
    if (CONNECTION_SPECIFIC.has(name) || (name === 'te' && value !== 'trailers')) return undefined;
    const earlier = headers[name];
    headers[name] = earlier === undefined ? value : `${earlier}, ${value}`;
  }
  const method = headers[':method'];
  if (method === undefined) return undefined;
  if (method !== 'CONNECT' && (headers[':scheme'] === undefined || !headers[':path'])) return undefined;
  return headers;
}
