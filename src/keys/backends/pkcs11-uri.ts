/**
 * [RFC 7512](https://www.rfc-editor.org/rfc/rfc7512) PKCS#11 URIs, as key files name HSM
 * keys: `pkcs11:token=jwt;object=es256-1?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:hsm-pin.txt`.
 * Parsed strictly: an attribute jwt-grpc does not use is refused by name, rather than
 * ignored and a different key (or none) selected.
 */
import { Buffer } from 'node:buffer';
import { isAbsolute, resolve } from 'node:path';
import { JwtGrpcError } from '../../base/errors.js';

/** A parsed PKCS#11 URI: what selects the token and the key, and how to reach them. */
export interface Pkcs11Uri {
  readonly token?: string;
  readonly serial?: string;
  readonly slotId?: number;
  /** The key's label (CKA_LABEL). */
  readonly object?: string;
  /** The key's CKA_ID, as bytes. */
  readonly id?: Buffer;
  readonly modulePath?: string;
  /** `file:PATH`: the PIN is the file's first line. */
  readonly pinSource?: string;
}

/** The path attributes read (RFC 7512 section 2.3); `type` must be `private` when given. */
const PATH_ATTRIBUTES = ['token', 'serial', 'slot-id', 'object', 'id', 'type'];
/** The query attributes read. `pin-value` is refused on purpose: a PIN is never written into a reference. */
const QUERY_ATTRIBUTES = ['module-path', 'pin-source'];

function uriError(message: string): JwtGrpcError {
  return new JwtGrpcError('ERR_INVALID_KEY', `pkcs11 URI: ${message}`, { field: 'pkcs11' });
}

function decode(value: string, name: string): Buffer {
  if (/%(?![0-9a-fA-F]{2})/.test(value)) throw uriError(`${name} has a bad percent-encoding`);
  const bytes: number[] = [];
  for (let at = 0; at < value.length; at += 1) {
    if (value[at] === '%') {
      bytes.push(Number.parseInt(value.slice(at + 1, at + 3), 16));
      at += 2;
    } else {
      bytes.push(...Buffer.from(value[at] as string, 'utf8'));
    }
  }
  return Buffer.from(bytes);
}

function attributes(part: string, separator: string, known: readonly string[], where: string): Map<string, string> {
  const found = new Map<string, string>();
  if (part === '') return found;
  for (const pair of part.split(separator)) {
    const equals = pair.indexOf('=');
    const name = equals < 0 ? pair : pair.slice(0, equals);
    if (name === 'pin-value') throw uriError('pin-value is refused: give the PIN with pin-source=file:PATH or JWT_GRPC_PKCS11_PIN');
    if (!known.includes(name))
      throw uriError(`unknown ${where} attribute ${JSON.stringify(name.slice(0, 64))} (known: ${known.join(', ')})`);
    if (equals < 0) throw uriError(`${name} has no value`);
    if (found.has(name)) throw uriError(`${name} is given twice`);
    found.set(name, pair.slice(equals + 1));
  }
  return found;
}

/**
 * Parses a `pkcs11:` URI; refuses unknown attributes (naming them), `pin-value`, and a
 * URI that names no key (neither `object` nor `id`).
 *
 * @example
 * ```ts
 * parsePkcs11Uri('pkcs11:token=jwt;object=es256-1?module-path=/usr/lib/softhsm/libsofthsm2.so').object; // 'es256-1'
 * ```
 */
export function parsePkcs11Uri(uri: string): Pkcs11Uri {
  if (!uri.startsWith('pkcs11:')) throw uriError('must start with "pkcs11:"');
  const rest = uri.slice('pkcs11:'.length);
  const question = rest.indexOf('?');
  const path = attributes(question < 0 ? rest : rest.slice(0, question), ';', PATH_ATTRIBUTES, 'path');
  const query = attributes(question < 0 ? '' : rest.slice(question + 1), '&', QUERY_ATTRIBUTES, 'query');
  const text = (map: Map<string, string>, name: string): string | undefined => {
    const value = map.get(name);
    return value === undefined ? undefined : decode(value, name).toString('utf8');
  };
  const type = text(path, 'type');
  if (type !== undefined && type !== 'private') throw uriError(`type=${JSON.stringify(type.slice(0, 32))}: a signing key is type=private`);
  const slot = text(path, 'slot-id');
  if (slot !== undefined && !/^\d{1,10}$/.test(slot)) throw uriError('slot-id must be a decimal number');
  const id = path.get('id');
  const parsed: Pkcs11Uri = {
    token: text(path, 'token'),
    serial: text(path, 'serial'),
    slotId: slot === undefined ? undefined : Number(slot),
    object: text(path, 'object'),
    id: id === undefined ? undefined : decode(id, 'id'),
    modulePath: text(query, 'module-path'),
    pinSource: text(query, 'pin-source'),
  };
  if (parsed.object === undefined && parsed.id === undefined) throw uriError('names no key: give object= (its label) or id=');
  if (parsed.pinSource !== undefined && !parsed.pinSource.startsWith('file:')) throw uriError('pin-source must be file:PATH');
  return parsed;
}

/** The URI with its query removed: what messages may name (a module path is harmless, but short is better). */
export function describePkcs11Uri(uri: string): string {
  const question = uri.indexOf('?');
  return question < 0 ? uri : uri.slice(0, question);
}

/**
 * `uri` with a relative `pin-source=file:PATH` made absolute from `dir` (the key file's
 * directory, as a `pemFile` is), so that every process (a cluster worker, started elsewhere)
 * reads the same file; any other URI, a malformed one included, unchanged (opening it says
 * what is wrong). @internal
 *
 * @example
 * ```ts
 * pinSourceFrom('pkcs11:object=k?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:pin.txt', '/etc/jwt-grpc');
 * // 'pkcs11:object=k?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:/etc/jwt-grpc/pin.txt'
 * ```
 */
export function pinSourceFrom(uri: string, dir: string): string {
  let pinSource: string | undefined;
  try {
    pinSource = parsePkcs11Uri(uri).pinSource;
  } catch {
    return uri;
  }
  const file = pinSource?.slice('file:'.length);
  if (file === undefined || isAbsolute(file)) return uri;
  const question = uri.indexOf('?');
  const query = uri
    .slice(question + 1)
    .split('&')
    .map((pair) =>
      pair.startsWith('pin-source=') ? `pin-source=file:${encodeURIComponent(resolve(dir, file)).replaceAll('%2F', '/')}` : pair,
    );
  return `${uri.slice(0, question)}?${query.join('&')}`;
}
