/**
 * The Connect protocol (https://connectrpc.com/docs/protocol/): unary calls as plain HTTP
 * (the message is the body, the status an HTTP status and a JSON error, trailers as
 * `trailer-` headers), by POST or, for a method without side effects, by GET with the
 * message in the query; streaming calls as enveloped messages ended by an end-stream
 * message that holds the status and the trailers.
 */
import { Buffer } from 'node:buffer';
import { type CallMetadata, GrpcStatus, GrpcStatusError, type StatusCode } from '../../contracts/handler-api.js';
import type { MessageEncoding } from '../http2/compression.js';
import { type MessageSink, framedMessage } from '../http2/framing.js';
import { type HeaderFields, addMetadataHeaders } from '../http2/metadata.js';
import { type ConnectErrorDetail, splitStatusDetails } from './status-details.js';
import type { ExchangeFields } from './exchange.js';
import { EnvelopeBody, mediaType } from './grpc-web.js';
import type { BodyReader, ProtocolWire, WholeResponse } from './wire.js';

/** Connect's encodings: the specification names gzip, br and zstd; this server reads and writes gzip. */
export const CONNECT_ACCEPT_ENCODING = 'gzip';

/** The end-stream flag of a streaming response's last envelope. */
const END_STREAM_FLAG = 0x02;

/** Connect's code names, by gRPC status number (the specification's "Error Codes"). */
const CODE_NAMES: readonly string[] = [
  'ok',
  'canceled',
  'unknown',
  'invalid_argument',
  'deadline_exceeded',
  'not_found',
  'already_exists',
  'permission_denied',
  'resource_exhausted',
  'failed_precondition',
  'aborted',
  'out_of_range',
  'unimplemented',
  'internal',
  'unavailable',
  'data_loss',
  'unauthenticated',
];

/** The HTTP status of each code in a unary response, as the specification maps them (google.rpc.Code's mapping). */
const HTTP_STATUS: readonly number[] = [200, 499, 500, 400, 504, 404, 409, 403, 429, 400, 409, 400, 501, 500, 503, 500, 401];

/**
 * Connect's name of a gRPC status, and the HTTP status a unary error answers with.
 *
 * @example
 * ```ts
 * connectCode(GrpcStatus.UNAUTHENTICATED); // { name: 'unauthenticated', httpStatus: 401 }
 * ```
 */
export function connectCode(status: StatusCode): { readonly name: string; readonly httpStatus: number } {
  return { name: CODE_NAMES[status] ?? 'unknown', httpStatus: HTTP_STATUS[status] ?? 500 };
}

/** What a Connect content type says: the codec, and whether the call streams (enveloped). */
export interface ConnectType {
  readonly codec: 'proto' | 'json';
  readonly streaming: boolean;
}

const CONNECT_TYPES: ReadonlyMap<string, ConnectType> = new Map([
  ['application/proto', { codec: 'proto', streaming: false }],
  ['application/json', { codec: 'json', streaming: false }],
  ['application/connect+proto', { codec: 'proto', streaming: true }],
  ['application/connect+json', { codec: 'json', streaming: true }],
]);

/**
 * The Connect type of a request's `content-type` (parameters such as `charset=utf-8` ignored), or undefined.
 *
 * @example
 * ```ts
 * connectType('application/json; charset=utf-8'); // { codec: 'json', streaming: false }
 * ```
 */
export function connectType(contentType: string): ConnectType | undefined {
  return CONNECT_TYPES.get(mediaType(contentType));
}

/** Connect's encoding header value to this server's, or undefined when it cannot decompress it. */
export function connectEncoding(header: string | undefined): MessageEncoding | undefined {
  if (header === undefined || header === 'identity' || header === '') return 'identity';
  return header === 'gzip' ? 'gzip' : undefined;
}

/** True when an `accept-encoding` list names `encoding` (identity always). */
function listed(header: string | undefined, encoding: MessageEncoding): boolean {
  if (encoding === 'identity') return true;
  if (header === undefined) return false;
  return header.split(',').some((item) => item.trim().split(';')[0] === encoding);
}

/**
 * `connect-timeout-ms`: at most 10 ASCII digits (the specification's Timeout-Milliseconds).
 * NaN when malformed.
 */
export function parseConnectTimeout(value: string): number {
  return /^\d{1,10}$/.test(value) ? Number(value) : Number.NaN;
}

/** The JSON error of the specification: `{ code, message, details }`, the details a handler attached (./status-details.ts). */
export function errorJson(status: StatusCode, details: string, typed: readonly ConnectErrorDetail[] = []): Buffer {
  const error: { code: string; message?: string; details?: readonly ConnectErrorDetail[] } = { code: connectCode(status).name };
  if (details.length > 0) error.message = details;
  if (typed.length > 0) error.details = typed;
  return Buffer.from(JSON.stringify(error), 'utf8');
}

/** Metadata as the end-stream message writes it: name to values, `-bin` values base64. */
function metadataJson(metadata: CallMetadata): Record<string, string[]> {
  const fields: HeaderFields = {};
  addMetadataHeaders(fields, metadata);
  const out: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(fields)) out[name] = Array.isArray(value) ? value : [String(value)];
  return out;
}

/** A unary body: the whole body is the message, at most `maxBytes`. */
class WholeBody implements BodyReader {
  readonly #maxBytes: number;
  readonly #chunks: Buffer[] = [];
  #length = 0;
  readonly #compressed: boolean;

  constructor(maxBytes: number, compressed: boolean) {
    this.#maxBytes = maxBytes;
    this.#compressed = compressed;
  }

  /** The body is held whole until it ends. */
  get holding(): boolean {
    return this.#length > 0;
  }

  push(chunk: Buffer): void {
    this.#length += chunk.length;
    if (this.#length > this.#maxBytes) {
      throw new GrpcStatusError(
        GrpcStatus.RESOURCE_EXHAUSTED,
        `request message exceeds the limit of ${this.#maxBytes} bytes (maxReceiveMessageBytes)`,
      );
    }
    this.#chunks.push(Buffer.from(chunk));
  }

  finish(sink: MessageSink): void {
    sink.onMessage(this.#compressed, this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks, this.#length));
  }
}

/** A GET's message, from the query: there is no body. */
class QueryBody implements BodyReader {
  readonly holding = false;
  readonly #message: Buffer;
  readonly #compressed: boolean;

  constructor(message: Buffer, compressed: boolean) {
    this.#message = message;
    this.#compressed = compressed;
  }

  push(): void {
    throw new GrpcStatusError(GrpcStatus.INVALID_ARGUMENT, 'a Connect GET request has no body');
  }

  finish(sink: MessageSink): void {
    sink.onMessage(this.#compressed, this.#message);
  }
}

/** Where a Connect call's message comes from. */
export type ConnectBody =
  | { readonly kind: 'body'; readonly maxBytes: number }
  | { readonly kind: 'query'; readonly message: Buffer }
  | { readonly kind: 'envelopes'; readonly maxBytes: number };

/** One call's Connect wire: unary (POST or GET) or streaming. */
export class ConnectWire implements ProtocolWire {
  readonly protocol = 'connect';
  readonly streaming: boolean;
  readonly requestEncoding: MessageEncoding;
  readonly reader: BodyReader;
  readonly #codec: 'proto' | 'json';
  readonly #acceptEncoding: string | undefined;
  /** Extra headers of every answer (a GET's ETag and Cache-Control are added by the call's owner). */
  readonly #contentType: string;

  constructor(type: ConnectType, requestEncoding: MessageEncoding, acceptEncoding: string | undefined, body: ConnectBody) {
    this.streaming = type.streaming;
    this.#codec = type.codec;
    this.requestEncoding = requestEncoding;
    this.#acceptEncoding = acceptEncoding;
    this.#contentType = type.streaming ? `application/connect+${type.codec}` : `application/${type.codec}`;
    const compressed = requestEncoding !== 'identity';
    if (body.kind === 'envelopes') this.reader = new EnvelopeBody(body.maxBytes);
    else if (body.kind === 'query') this.reader = new QueryBody(body.message, compressed);
    else this.reader = new WholeBody(body.maxBytes, compressed);
  }

  accepts(encoding: MessageEncoding): boolean {
    return encoding !== 'deflate' && listed(this.#acceptEncoding, encoding);
  }

  head(encoding: MessageEncoding, metadata: CallMetadata | undefined): ExchangeFields {
    const headers: HeaderFields = { 'content-type': this.#contentType };
    if (encoding !== 'identity') headers[this.streaming ? 'connect-content-encoding' : 'content-encoding'] = encoding;
    headers[this.streaming ? 'connect-accept-encoding' : 'accept-encoding'] = CONNECT_ACCEPT_ENCODING;
    if (metadata !== undefined) addMetadataHeaders(headers, metadata);
    return headers;
  }

  message(compressed: boolean, bytes: Buffer): Buffer {
    return this.streaming ? framedMessage(compressed, bytes) : bytes;
  }

  tail(status: StatusCode, details: string, trailers: CallMetadata | undefined): Buffer {
    const end: { error?: { code: string; message?: string }; metadata?: Record<string, string[]> } = {};
    const split = splitStatusDetails(trailers);
    if (status !== GrpcStatus.OK) end.error = JSON.parse(errorJson(status, details, split.details).toString('utf8'));
    if (split.metadata !== undefined && split.metadata.size > 0) end.metadata = metadataJson(split.metadata);
    const frame = framedMessage(false, Buffer.from(JSON.stringify(end), 'utf8'));
    frame[0] = END_STREAM_FLAG;
    return frame;
  }

  whole(
    status: StatusCode,
    details: string,
    metadata: CallMetadata | undefined,
    trailers: CallMetadata | undefined,
    message: { readonly encoding: MessageEncoding; readonly bytes: Buffer } | undefined,
  ): WholeResponse {
    if (this.streaming) {
      const body = message === undefined ? [] : [this.message(message.encoding !== 'identity', message.bytes)];
      body.push(this.tail(status, details, trailers));
      return { status: 200, headers: this.head(message?.encoding ?? 'identity', metadata), body };
    }
    const headers: HeaderFields =
      message !== undefined && status === GrpcStatus.OK
        ? (this.head(message.encoding, metadata) as HeaderFields)
        : { 'content-type': 'application/json', 'accept-encoding': CONNECT_ACCEPT_ENCODING };
    if (status !== GrpcStatus.OK && metadata !== undefined) addMetadataHeaders(headers, metadata);
    const split = splitStatusDetails(trailers);
    if (split.metadata !== undefined) addTrailerHeaders(headers, split.metadata);
    if (status === GrpcStatus.OK && message !== undefined) return { status: 200, headers, body: [message.bytes] };
    return { status: connectCode(status).httpStatus, headers, body: [errorJson(status, details, split.details)] };
  }
}

/** A unary response's trailers: each as a header prefixed `trailer-` (the specification's Unary-Response). */
function addTrailerHeaders(headers: HeaderFields, trailers: CallMetadata): void {
  const fields: HeaderFields = {};
  addMetadataHeaders(fields, trailers);
  for (const [name, value] of Object.entries(fields)) headers[`trailer-${name}`] = value;
}

/** The codec names of a GET's `encoding` parameter. */
const GET_ENCODINGS: ReadonlySet<string> = new Set(['proto', 'json']);

/**
 * A query's parameters as bytes: percent-decoded to bytes, not to text, since an
 * unencoded binary (proto) message is any bytes. The first of a repeated name counts.
 */
function queryBytes(query: string): Map<string, Buffer> {
  const params = new Map<string, Buffer>();
  for (const pair of query.split('&')) {
    if (pair.length === 0) continue;
    const equals = pair.indexOf('=');
    const name = percentDecode(equals < 0 ? pair : pair.slice(0, equals)).toString('latin1');
    if (!params.has(name)) params.set(name, percentDecode(equals < 0 ? '' : pair.slice(equals + 1)));
  }
  return params;
}

/** `%XX` to its byte, `+` to a space (the form encoding URL query strings use); other characters as they are. */
function percentDecode(text: string): Buffer {
  const out = Buffer.allocUnsafe(text.length);
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (char === 0x25 && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      out[length++] = Number.parseInt(text.slice(i + 1, i + 3), 16);
      i += 2;
    } else {
      out[length++] = char === 0x2b ? 0x20 : char & 0xff;
    }
  }
  return out.subarray(0, length);
}

/** A Connect GET request, read from its query (the specification's Unary-Get-Request). */
export interface ConnectGet {
  readonly type: ConnectType;
  readonly message: Buffer;
  readonly encoding: MessageEncoding;
}

/**
 * Reads a GET's query: `encoding` (proto or json) and `message` are required; `base64=1`
 * makes the message base64url (padded or not); `compression` names its encoding;
 * `connect` when present must be `v1`. Throws GrpcStatusError naming the bad parameter.
 *
 * @example
 * ```ts
 * parseConnectGet('connect=v1&encoding=json&message=%7B%7D').message.toString(); // '{}'
 * ```
 */
export function parseConnectGet(query: string): ConnectGet {
  const params = queryBytes(query);
  const invalid = (message: string) => new GrpcStatusError(GrpcStatus.INVALID_ARGUMENT, `Connect GET: ${message}`);
  const version = params.get('connect')?.toString('latin1') ?? null;
  if (version !== null && version !== 'v1') throw invalid(`unsupported connect=${version} (this server speaks v1)`);
  const codec = params.get('encoding')?.toString('latin1') ?? null;
  if (codec === null || !GET_ENCODINGS.has(codec)) throw invalid('the query parameter encoding must be proto or json');
  const raw = params.get('message');
  if (raw === undefined) throw invalid('the query parameter message is missing');
  const base64 = params.get('base64')?.toString('latin1') ?? null;
  const text = raw.toString('latin1');
  if (base64 !== null && base64 !== '1' && base64 !== '0') throw invalid('the query parameter base64 must be 1 when present');
  if (base64 === '1' && !/^[A-Za-z0-9_-]*={0,2}$/.test(text)) throw invalid('message is not base64url');
  const message = base64 === '1' ? Buffer.from(text, 'base64url') : raw;
  const compression = params.get('compression')?.toString('latin1');
  const encoding = connectEncoding(compression);
  if (encoding === undefined) {
    throw new GrpcStatusError(
      GrpcStatus.UNIMPLEMENTED,
      `compression ${compression} is not supported; supported: ${CONNECT_ACCEPT_ENCODING}`,
    );
  }
  return { type: { codec: codec as 'proto' | 'json', streaming: false }, message, encoding };
}
