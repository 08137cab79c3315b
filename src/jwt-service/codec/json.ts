/**
 * Hand-written proto3 JSON mapping (https://protobuf.dev/programming-guides/json/) of
 * JwtService's messages: the fast path of a Connect or gRPC-Web JSON call to this service.
 *
 * Why: the generic mapping (src/transport/protocols/json.ts, by @bufbuild/protobuf) reads
 * JSON into a reflective message, writes it as protobuf and decodes that with the method's
 * own codec, and the answer the other way round; for three- to five-field messages of
 * strings that is most of a JSON call's work. These read the parsed JSON straight into
 * the plain object the protobuf decoders give (./decode.ts: every field present, proto3
 * defaults filled in), and write the answer straight as JSON text.
 *
 * Each reader and writer handles the common shapes only and answers `undefined` for
 * anything else: a key it does not know, a field set twice (by its JSON name and its
 * proto name), a value of another type, an int64 beyond 2^53 or written in a form other
 * than plain digits, a string with a lone surrogate. The generic mapping then reads or
 * writes the message, so that every refusal and every corner of the mapping stays its
 * own: one set of rules, and this file only a shortcut through them.
 * test/jwt-service/codec/json.test.ts holds both to the same answers.
 */
import { Buffer } from 'node:buffer';
import { REASON_NUMBERS } from './encode.js';
import type { WellFormed } from './encode-request.js';

/** The kinds of field JwtService's messages hold. */
type FieldKind = 'string' | 'int64' | 'bool' | 'reason';

/** One field: its proto3 JSON name (lowerCamelCase), its proto name (the plain object's key), its kind. */
interface JsonField {
  readonly json: string;
  readonly proto: string;
  readonly kind: FieldKind;
}

/**
 * A message's JSON reader: the parsed JSON body to the request object, or undefined when
 * the generic mapping must read it.
 */
export type JsonRequestReader = (json: unknown) => unknown;

/** A message's JSON writer: the response object to its JSON (UTF-8), or undefined when the generic mapping must write it. */
export type JsonResponseWriter = (message: never) => Buffer | undefined;

/** A plain-digits int64 that a double holds exactly (at most 15 digits): the shape Number() reads as the mapping does. */
const SAFE_INT64_TEXT = /^(?:0|-?[1-9]\d{0,14})$/;

/** An int64 field's JSON value (a number or a decimal string) as the Number the protobuf decoder gives, or undefined. */
function readInt64(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value + 0 : undefined;
  if (typeof value === 'string' && SAFE_INT64_TEXT.test(value)) return Number(value);
  return undefined;
}

/** A field's JSON value as the plain object holds it, or undefined (the generic mapping decides). */
function readValue(kind: FieldKind, value: unknown): unknown {
  if (kind === 'int64') return readInt64(value);
  // Only requests are read, and they hold strings and int64s; a lone surrogate is the generic mapping's to replace.
  return typeof value === 'string' && (value as WellFormed).isWellFormed() ? value : undefined;
}

/**
 * The reader of a request message of `fields`, whose decoded form `empty()` gives (the
 * protobuf decoder's defaults). A null value leaves the default, as the mapping says.
 */
function requestReader(fields: readonly JsonField[], empty: () => Record<string, unknown>): JsonRequestReader {
  const byKey = new Map<string, JsonField>();
  for (const field of fields) byKey.set(field.json, field).set(field.proto, field);
  return (json) => {
    if (json === null || typeof json !== 'object' || Array.isArray(json)) return undefined;
    const message = empty();
    let seen = 0;
    for (const key of Object.keys(json)) {
      const field = byKey.get(key);
      if (field === undefined) return undefined;
      const bit = 1 << fields.indexOf(field);
      if ((seen & bit) !== 0) return undefined;
      seen |= bit;
      const value = (json as Record<string, unknown>)[key];
      if (value === null) continue;
      const read = readValue(field.kind, value);
      if (read === undefined) return undefined;
      message[field.proto] = read;
    }
    return message;
  };
}

/** A string JSON.stringify writes as it is, between quotes: no quote, backslash or control character to escape. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what JSON escapes
const PLAIN_STRING = /^[^"\\\u0000-\u001f]*$/;

/**
 * The JSON text of one field's value, as JSON.stringify would write it, without quotes
 * (int64 as a decimal string, as the mapping says); '' for the proto3 default (left out, as
 * the mapping writes by default); undefined for a value the generic mapping must write.
 */
function valueText(kind: FieldKind, value: unknown): string | undefined {
  switch (kind) {
    case 'string':
      if (typeof value !== 'string' || !(value as WellFormed).isWellFormed()) return undefined;
      if (value === '') return '';
      return PLAIN_STRING.test(value) ? value : JSON.stringify(value).slice(1, -1);
    case 'int64':
      if (!Number.isSafeInteger(value)) return undefined;
      return value === 0 ? '' : String(value);
    case 'bool':
      if (typeof value !== 'boolean') return undefined;
      return value ? 'true' : '';
    case 'reason':
      // A name the protobuf encoder has no number for is the generic mapping's (and the encoder's) to refuse.
      if (typeof value !== 'string' || !Object.hasOwn(REASON_NUMBERS, value)) return undefined;
      return value === 'REASON_UNSPECIFIED' ? '' : value;
  }
}

/**
 * The writer of a response message of `fields`, in field-number order (as the generic
 * mapping writes them). The JSON is written piece by piece into one buffer sized first: no
 * string of the whole message is built (a token is most of it).
 */
function responseWriter(fields: readonly JsonField[]): JsonResponseWriter {
  // Each field's text before its value (`"name":"`, a bool's `"name":`) and after it (`"` or nothing).
  const closers = fields.map((field) => (field.kind === 'bool' ? '' : '"'));
  const openers = fields.map((field, i) => `"${field.json}":${closers[i]}`);
  return (message) => {
    const values: string[] = [];
    let size = 2;
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i] as JsonField;
      const text = valueText(field.kind, (message as Record<string, unknown>)[field.proto]);
      if (text === undefined) return undefined;
      values.push(text);
      if (text !== '') size += (size > 2 ? 1 : 0) + (openers[i] as string).length + Buffer.byteLength(text) + (closers[i] as string).length;
    }
    const out = Buffer.allocUnsafe(size);
    let at = out.write('{', 0, 'latin1');
    for (let i = 0; i < fields.length; i++) {
      const text = values[i] as string;
      if (text === '') continue;
      if (at > 1) at += out.write(',', at, 'latin1');
      at += out.write(openers[i] as string, at, 'latin1');
      at += out.write(text, at, 'utf8');
      at += out.write(closers[i] as string, at, 'latin1');
    }
    out.write('}', at, 'latin1');
    return out;
  };
}

/** A field of `kind` whose proto name is `proto`; its JSON name is protoc's lowerCamelCase of it. */
function field(proto: string, kind: FieldKind): JsonField {
  return { json: proto.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase()), proto, kind };
}

/**
 * JwtService's methods' JSON readers and writers by method name (proto/jwt.proto's field
 * numbers in order), for src/jwt-service/definition.ts.
 *
 * @example
 * ```ts
 * const { request, response } = JWT_SERVICE_JSON.GenerateJwt;
 * request({ algorithm: 'HS256', ttlSeconds: '60' }); // { algorithm: 'HS256', subject: '', audience: '', ttl_seconds: 60, claims_json: '' }
 * response({ jwt: 'e30.e30.sig', sub: 'ada', kid: 'k1', expires_at: 1767225600 } as never)?.toString(); // '{"jwt":"e30.e30.sig","sub":"ada","kid":"k1","expiresAt":"1767225600"}'
 * ```
 */
export const JWT_SERVICE_JSON: Readonly<Record<string, { readonly request: JsonRequestReader; readonly response: JsonResponseWriter }>> = {
  GenerateJwt: {
    request: requestReader(
      [
        field('algorithm', 'string'),
        field('subject', 'string'),
        field('audience', 'string'),
        field('ttl_seconds', 'int64'),
        field('claims_json', 'string'),
      ],
      () => ({ algorithm: '', subject: '', audience: '', ttl_seconds: 0, claims_json: '' }),
    ),
    response: responseWriter([field('jwt', 'string'), field('sub', 'string'), field('kid', 'string'), field('expires_at', 'int64')]),
  },
  VerifyJwt: {
    request: requestReader([field('jwt', 'string'), field('audience', 'string'), field('issuer', 'string')], () => ({
      jwt: '',
      audience: '',
      issuer: '',
    })),
    response: responseWriter([field('valid', 'bool'), field('sub', 'string'), field('claims_json', 'string'), field('reason', 'reason')]),
  },
  GetJwks: {
    request: requestReader([], () => ({})),
    response: responseWriter([field('jwks_json', 'string')]),
  },
  GetStatusList: {
    request: requestReader([field('uri', 'string')], () => ({ uri: '' })),
    response: responseWriter([field('token', 'string')]),
  },
  RevokeJwt: {
    request: requestReader(
      [field('jwt', 'string'), field('jti', 'string'), field('expires_at', 'int64'), field('reason', 'string')],
      () => ({ jwt: '', jti: '', expires_at: 0, reason: '' }),
    ),
    response: responseWriter([field('revoked', 'bool'), field('expires_at', 'int64')]),
  },
};
