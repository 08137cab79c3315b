/**
 * RFC 9113 (https://www.rfc-editor.org/rfc/rfc9113) §8.2-8.3: what makes a request's header list well-formed. A malformed one is
 * a stream error (PROTOCOL_ERROR); this module only decides.
 */

/**
 * The request's pseudo-headers and the fields this server reads, by name (a repeated field's
 * values joined with ", "). Every other field stays in the decoded list (name, value, ...),
 * where the call's metadata is read from.
 */
export interface RequestHeaders {
  readonly ':method'?: string;
  readonly ':scheme'?: string;
  readonly ':path'?: string;
  readonly ':authority'?: string;
  readonly 'content-type'?: string;
  readonly 'content-length'?: string;
  readonly te?: string;
  readonly 'grpc-encoding'?: string;
  readonly 'grpc-accept-encoding'?: string;
  readonly 'grpc-timeout'?: string;
}

/** One object shape for every request (V8 reads and writes its fields at fixed places). */
class KnownHeaders implements RequestHeaders {
  ':method': string | undefined = undefined;
  ':scheme': string | undefined = undefined;
  ':path': string | undefined = undefined;
  ':authority': string | undefined = undefined;
  'content-type': string | undefined = undefined;
  'content-length': string | undefined = undefined;
  te: string | undefined = undefined;
  'grpc-encoding': string | undefined = undefined;
  'grpc-accept-encoding': string | undefined = undefined;
  'grpc-timeout': string | undefined = undefined;
}

/** `earlier`, with `value` after it when the name came before (a repeated field, §8.2.2 / RFC 9110 §5.3). */
function joined(earlier: string | undefined, value: string): string {
  return earlier === undefined ? value : `${earlier}, ${value}`;
}

/**
 * Keeps regular field `name` when {@link RequestHeaders} has it. One case a name, each
 * writing its own property: V8 compiles a literal property name to a fixed place, where
 * `headers[name]` would look the name up on every request.
 */
function keepRegularField(headers: KnownHeaders, name: string, value: string): void {
  switch (name) {
    case 'content-type':
      headers['content-type'] = joined(headers['content-type'], value);
      return;
    case 'content-length':
      headers['content-length'] = joined(headers['content-length'], value);
      return;
    case 'te':
      headers.te = joined(headers.te, value);
      return;
    case 'grpc-encoding':
      headers['grpc-encoding'] = joined(headers['grpc-encoding'], value);
      return;
    case 'grpc-accept-encoding':
      headers['grpc-accept-encoding'] = joined(headers['grpc-accept-encoding'], value);
      return;
    case 'grpc-timeout':
      headers['grpc-timeout'] = joined(headers['grpc-timeout'], value);
      return;
  }
}

/** Sets pseudo-header `name` (§8.3.1), as keepRegularField does; false for one a request may not carry, or a repeat. */
function setPseudoHeader(headers: KnownHeaders, name: string, value: string): boolean {
  switch (name) {
    case ':method':
      if (headers[':method'] !== undefined) return false;
      headers[':method'] = value;
      return true;
    case ':scheme':
      if (headers[':scheme'] !== undefined) return false;
      headers[':scheme'] = value;
      return true;
    case ':path':
      if (headers[':path'] !== undefined) return false;
      headers[':path'] = value;
      return true;
    case ':authority':
      if (headers[':authority'] !== undefined) return false;
      headers[':authority'] = value;
      return true;
    default:
      return false;
  }
}
/** §8.2.2: connection-specific fields have no place in HTTP/2. */
const CONNECTION_SPECIFIC = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

/** RFC 9110 (https://www.rfc-editor.org/rfc/rfc9110) §5.6.2 token characters, lowercase only (§8.2.1): 1 where allowed in a field name. */
const NAME_CHAR = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz") NAME_CHAR[c.charCodeAt(0)] = 1;

/** §8.2.1: a name of lowercase token characters (after the ':' of a pseudo-header); the encoder's check too. */
export function isFieldName(name: string): boolean {
  const start = name.charCodeAt(0) === 58 /* ':' */ ? 1 : 0;
  if (name.length <= start) return false;
  for (let i = start; i < name.length; i++) {
    const code = name.charCodeAt(i);
    if (code >= 128 || NAME_CHAR[code] === 0) return false;
  }
  return true;
}

/** §8.2.1: no NUL, CR or LF in a value, and no whitespace at either end. */
function validValue(value: string): boolean {
  const last = value.length - 1;
  if (last >= 0) {
    const first = value.charCodeAt(0);
    const end = value.charCodeAt(last);
    if (first === 32 || first === 9 || end === 32 || end === 9) return false;
  }
  for (let i = 0; i <= last; i++) {
    const code = value.charCodeAt(i);
    if (code === 0 || code === 10 || code === 13) return false;
  }
  return true;
}

/** §8.2.2, for a field whose name and value are well-formed: no connection-specific field, and no `te` other than "trailers". */
function allowedRegularField(name: string, value: string): boolean {
  return !CONNECTION_SPECIFIC.has(name) && (name !== 'te' || value === 'trailers');
}

/**
 * §8.2.1 for one field, alone: a name of lowercase token characters and a value without NUL,
 * CR, LF or whitespace at an end. The HPACK decoder asks once per field it decodes from a
 * literal, and keeps the answer with a dynamic-table entry (hpack.ts, `wellFormed`).
 */
export function wellFormedField(name: string, value: string): boolean {
  return isFieldName(name) && validValue(value);
}

/**
 * §8.1: trailers are regular fields only, each well-formed as a request's are (§8.2.1,
 * §8.2.2); false when one is not, or when one is a pseudo-header. `charactersChecked`: every
 * field has passed {@link wellFormedField} already (the HPACK decoder's `wellFormed`).
 */
export function validTrailerFields(fields: readonly string[], charactersChecked = false): boolean {
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i] as string;
    const value = fields[i + 1] as string;
    if (name.charCodeAt(0) === 58 /* ':' */ || !(charactersChecked || wellFormedField(name, value))) return false;
    if (!allowedRegularField(name, value)) return false;
  }
  return true;
}

/**
 * The request's {@link RequestHeaders} from a decoded list (name, value, ...), or undefined
 * when the list is malformed: a name that is not lowercase token characters, a value with
 * NUL, CR, LF or whitespace at an end, an unknown, repeated or late pseudo-header,
 * a connection-specific field, `te` other than "trailers", or a missing :method, :scheme
 * or :path. `charactersChecked`: every field has passed {@link wellFormedField} already (the
 * HPACK decoder's `wellFormed`), so only the rules across fields are left.
 */
export function validateRequestFields(fields: readonly string[], charactersChecked = false): RequestHeaders | undefined {
  const headers = new KnownHeaders();
  let regularSeen = false;
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i] as string;
    const value = fields[i + 1] as string;
    if (!charactersChecked && !wellFormedField(name, value)) return undefined;
    if (name.charCodeAt(0) === 58 /* ':' */) {
      if (regularSeen || !setPseudoHeader(headers, name, value)) return undefined;
      continue;
    }
    regularSeen = true;
    // Name and value were checked above: only what HTTP/2 forbids is left.
    if (!allowedRegularField(name, value)) return undefined;
    keepRegularField(headers, name, value);
  }
  const method = headers[':method'];
  if (method === undefined) return undefined;
  if (method !== 'CONNECT' && (headers[':scheme'] === undefined || !headers[':path'])) return undefined;
  return headers;
}
