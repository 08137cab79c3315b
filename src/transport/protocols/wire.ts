/**
 * What a protocol served beside gRPC puts on the wire, apart from the call that drives it
 * (./call.ts): how the request body splits into messages, and how headers, messages and
 * the status go out. Connect (./connect.ts) and gRPC-Web (./grpc-web.ts) each supply one.
 */
import type { Buffer } from 'node:buffer';
import { type CallMetadata, CallKey, type StatusCode } from '../../contracts/handler-api.js';
import type { PROTOCOLS } from '../../options/table.js';
import type { MessageEncoding } from '../http2/compression.js';
import type { MessageSink } from '../http2/framing.js';
import type { ExchangeFields } from './exchange.js';

/** The protocols a server may serve, as the `protocols` option and the call metrics name them. */
export type ProtocolName = (typeof PROTOCOLS)[number];

/**
 * The protocol a call came in by, attached to every Connect and gRPC-Web call (a gRPC call
 * has none: absent means gRPC), for the call metrics' `protocol` label. @internal
 */
export const CALL_PROTOCOL = new CallKey<ProtocolName>('protocol of the call');

/** Splits a request body into messages. Throws GrpcStatusError for a body the protocol refuses. */
export interface BodyReader {
  /**
   * True while the reader holds request bytes (a message not whole yet, or a unary body
   * until it ends): they stay counted against the connection's memory ceiling.
   */
  readonly holding: boolean;
  push(chunk: Buffer, sink: MessageSink): void;
  /** The body ended: hands out what is left (a whole-body message), or throws for a truncated one. */
  finish(sink: MessageSink): void;
}

/** A whole response given at once (nothing was sent before it). */
export interface WholeResponse {
  readonly status: number;
  readonly headers: ExchangeFields;
  readonly body: readonly Buffer[];
}

/** One protocol's wire, for one call. */
export interface ProtocolWire {
  readonly protocol: Exclude<ProtocolName, 'grpc'>;
  /** The encoding of the request's compressed messages. */
  readonly requestEncoding: MessageEncoding;
  readonly reader: BodyReader;
  /** True when the client accepts responses in `encoding`. */
  accepts(encoding: MessageEncoding): boolean;
  /** A streaming wire sends its head before the first message; a unary one (Connect unary) answers in one piece. */
  readonly streaming: boolean;
  /** The head of a streaming response (status 200): content type, encoding, the handler's metadata. */
  head(encoding: MessageEncoding, metadata: CallMetadata | undefined): ExchangeFields;
  /** One response message as the wire carries it. */
  message(compressed: boolean, bytes: Buffer): Buffer;
  /** What ends a streaming response: the status and the trailers, in the body. */
  tail(status: StatusCode, details: string, trailers: CallMetadata | undefined): Buffer;
  /**
   * The whole response when nothing was sent before: the one message (`message`, already
   * compressed by `encoding`) and OK, or an error.
   */
  whole(
    status: StatusCode,
    details: string,
    metadata: CallMetadata | undefined,
    trailers: CallMetadata | undefined,
    message: { readonly encoding: MessageEncoding; readonly bytes: Buffer } | undefined,
  ): WholeResponse;
}
