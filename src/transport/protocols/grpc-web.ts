/**
 * gRPC-Web (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-WEB.md): gRPC's
 * Length-Prefixed-Messages in the body both ways, and the status as a last body frame
 * (flag 0x80) holding the trailers as an HTTP/1 header block, so that no HTTP trailers
 * are needed. `application/grpc-web-text` carries the same bytes base64-encoded.
 */
import { Buffer } from 'node:buffer';
import { type CallMetadata, GrpcStatus, GrpcStatusError, type StatusCode } from '../../contracts/handler-api.js';
import { ACCEPT_ENCODING, type MessageEncoding, clientAccepts } from '../http2/compression.js';
import { MessageReader, type MessageSink, framedMessage } from '../http2/framing.js';
import { type HeaderFields, addMetadataHeaders } from '../http2/metadata.js';
import { percentEncode } from '../http2/protocol.js';
import type { ExchangeFields } from './exchange.js';
import type { BodyReader, ProtocolWire, WholeResponse } from './wire.js';

/** The body frame flag of the trailers (PROTOCOL-WEB: "the MSB of the first byte"). */
const TRAILER_FLAG = 0x80;

/** What a gRPC-Web content type says: the message codec and whether the body is base64. */
export interface GrpcWebType {
  readonly codec: 'proto' | 'json';
  readonly text: boolean;
}

/** The gRPC-Web content types this server reads, to their codec and framing. */
const GRPC_WEB_TYPES: ReadonlyMap<string, GrpcWebType> = new Map([
  ['application/grpc-web', { codec: 'proto', text: false }],
  ['application/grpc-web+proto', { codec: 'proto', text: false }],
  ['application/grpc-web+json', { codec: 'json', text: false }],
  ['application/grpc-web-text', { codec: 'proto', text: true }],
  ['application/grpc-web-text+proto', { codec: 'proto', text: true }],
  ['application/grpc-web-text+json', { codec: 'json', text: true }],
]);

/**
 * The gRPC-Web type of a request's `content-type` (its parameters ignored), or undefined.
 *
 * @example
 * ```ts
 * grpcWebType('application/grpc-web-text'); // { codec: 'proto', text: true }
 * ```
 */
export function grpcWebType(contentType: string): GrpcWebType | undefined {
  return GRPC_WEB_TYPES.get(mediaType(contentType));
}

/** A content type without its parameters, lower case. */
export function mediaType(contentType: string): string {
  const semicolon = contentType.indexOf(';');
  return (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

/**
 * Decodes base64 text arriving in chunks of any length: whole 4-character groups as they
 * come, each group on its own when padded (a client may send padded segments one after
 * another, as PROTOCOL-WEB allows).
 */
class Base64Body implements BodyReader {
  readonly #inner: BodyReader;
  #pending = '';

  constructor(inner: BodyReader) {
    this.#inner = inner;
  }

  get holding(): boolean {
    return this.#pending.length > 0 || this.#inner.holding;
  }

  push(chunk: Buffer, sink: MessageSink): void {
    const text = this.#pending + chunk.toString('latin1').replace(/[\r\n]/g, '');
    const whole = text.length - (text.length % 4);
    this.#pending = text.slice(whole);
    if (whole === 0) return;
    const groups = text.slice(0, whole);
    if (!/^[A-Za-z0-9+/=_-]*$/.test(groups)) throw new GrpcStatusError(GrpcStatus.INTERNAL, 'the grpc-web-text request body is not base64');
    if (!groups.includes('=')) {
      this.#inner.push(Buffer.from(groups, 'base64'), sink);
      return;
    }
    for (let i = 0; i < whole; i += 4) this.#inner.push(Buffer.from(groups.slice(i, i + 4), 'base64'), sink);
  }

  finish(sink: MessageSink): void {
    if (this.#pending.length > 0)
      throw new GrpcStatusError(GrpcStatus.INTERNAL, 'the grpc-web-text request body ends inside a base64 group');
    this.#inner.finish(sink);
  }
}

/** Length-Prefixed-Messages, as gRPC's own (../http2/framing.ts) reads them. */
export class EnvelopeBody implements BodyReader {
  readonly #reader: MessageReader;

  constructor(maxBytes: number) {
    this.#reader = new MessageReader(maxBytes);
  }

  get holding(): boolean {
    return this.#reader.partial;
  }

  push(chunk: Buffer, sink: MessageSink): void {
    this.#reader.push(chunk, sink);
  }

  finish(): void {
    if (this.#reader.partial) throw new GrpcStatusError(GrpcStatus.INTERNAL, 'the request ended inside a message');
  }
}

/** The trailer frame's header block: `name:value` lines, CRLF after each (PROTOCOL-WEB). */
function trailerBlock(status: StatusCode, details: string, trailers: CallMetadata | undefined): Buffer {
  const fields: HeaderFields = {};
  if (trailers !== undefined) addMetadataHeaders(fields, trailers, 'trailers');
  let text = `grpc-status:${status}\r\n`;
  if (details.length > 0) text += `grpc-message:${percentEncode(details)}\r\n`;
  for (const [name, value] of Object.entries(fields)) {
    for (const one of Array.isArray(value) ? value : [value]) text += `${name}:${one}\r\n`;
  }
  return Buffer.from(text, 'latin1');
}

/** One call's gRPC-Web wire. */
export class GrpcWebWire implements ProtocolWire {
  readonly protocol = 'grpc-web';
  readonly streaming = true;
  readonly requestEncoding: MessageEncoding;
  readonly reader: BodyReader;
  readonly #type: GrpcWebType;
  readonly #acceptEncoding: string | undefined;

  constructor(type: GrpcWebType, requestEncoding: MessageEncoding, acceptEncoding: string | undefined, maxBytes: number) {
    this.#type = type;
    this.requestEncoding = requestEncoding;
    this.#acceptEncoding = acceptEncoding;
    const envelopes = new EnvelopeBody(maxBytes);
    this.reader = type.text ? new Base64Body(envelopes) : envelopes;
  }

  accepts(encoding: MessageEncoding): boolean {
    return clientAccepts(this.#acceptEncoding, encoding);
  }

  head(encoding: MessageEncoding, metadata: CallMetadata | undefined): ExchangeFields {
    const type = this.#type;
    const headers: HeaderFields = {
      'content-type': `application/grpc-web${type.text ? '-text' : ''}+${type.codec}`,
      'grpc-accept-encoding': ACCEPT_ENCODING,
    };
    if (encoding !== 'identity') headers['grpc-encoding'] = encoding;
    if (metadata !== undefined) addMetadataHeaders(headers, metadata);
    return headers;
  }

  message(compressed: boolean, bytes: Buffer): Buffer {
    return this.#body(framedMessage(compressed, bytes));
  }

  tail(status: StatusCode, details: string, trailers: CallMetadata | undefined): Buffer {
    const block = trailerBlock(status, details, trailers);
    const frame = framedMessage(false, block);
    frame[0] = TRAILER_FLAG;
    return this.#body(frame);
  }

  whole(
    status: StatusCode,
    details: string,
    metadata: CallMetadata | undefined,
    trailers: CallMetadata | undefined,
    message: { readonly encoding: MessageEncoding; readonly bytes: Buffer } | undefined,
  ): WholeResponse {
    const body = message === undefined ? [] : [this.message(message.encoding !== 'identity', message.bytes)];
    body.push(this.tail(status, details, trailers));
    return { status: 200, headers: this.head(message?.encoding ?? 'identity', metadata), body };
  }

  /** The text variant sends each frame as its own padded base64 segment (PROTOCOL-WEB lets a server flush so). */
  #body(frame: Buffer): Buffer {
    return this.#type.text ? Buffer.from(frame.toString('base64'), 'latin1') : frame;
  }
}
