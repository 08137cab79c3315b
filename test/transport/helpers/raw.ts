/**
 * A bare node:http2 client, and frames for a bare TCP connection, for what gRPC clients
 * never send (bad headers, malformed frames, a wrong content-type) and for what they hide
 * (Trailers-Only, RST_STREAM codes, the compressed flag of a response).
 */
import { type ClientHttp2Session, type IncomingHttpHeaders, type OutgoingHttpHeaders, connect, constants } from 'node:http2';

export interface RawResponse {
  /** The first HEADERS block (in Trailers-Only, the only one). */
  readonly headers: IncomingHttpHeaders;
  /** Trailers, when they came in a HEADERS block of their own. */
  readonly trailers: IncomingHttpHeaders | undefined;
  /** True when the response was one HEADERS frame carrying END_STREAM. */
  readonly trailersOnly: boolean;
  /** The response DATA, concatenated. */
  readonly body: Buffer;
  /** The RST_STREAM code the stream closed with (0 for a normal close). */
  readonly rstCode: number;
  /** grpc-status from the trailers (or the Trailers-Only headers), as a number. */
  readonly status: number | undefined;
  /** grpc-message, percent-decoded. */
  readonly message: string | undefined;
}

/** A length-prefixed message: flag, big-endian length, bytes. */
export function frame(message: Buffer, compressed = false): Buffer {
  const prefix = Buffer.alloc(5);
  prefix[0] = compressed ? 1 : 0;
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}

/** The messages of a response body, with their compressed flags. */
export function unframe(body: Buffer): { compressed: boolean; bytes: Buffer }[] {
  const messages: { compressed: boolean; bytes: Buffer }[] = [];
  for (let offset = 0; offset < body.length; ) {
    const length = body.readUInt32BE(offset + 1);
    messages.push({ compressed: body[offset] === 1, bytes: body.subarray(offset + 5, offset + 5 + length) });
    offset += 5 + length;
  }
  return messages;
}

export function grpcHeaders(path: string, extra: OutgoingHttpHeaders = {}): OutgoingHttpHeaders {
  return { ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', ...extra };
}

/**
 * A connection whose SETTINGS exchange is done: the server's limits (header list size)
 * apply only once the client has acknowledged them, which it does before any request it
 * sends after this resolves.
 */
export function rawSession(port: number): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = connect(`http://127.0.0.1:${port}`, { maxSendHeaderBlockLength: 1 << 20 });
    session.once('remoteSettings', () => resolve(session));
    session.once('error', reject);
  });
}

export interface RawRequest {
  readonly headers: OutgoingHttpHeaders;
  /** DATA to send, each chunk written separately. */
  readonly chunks?: readonly Buffer[];
  /** Half-close after the chunks. Default true. */
  readonly end?: boolean;
}

/** Sends one request on `session` and collects the whole response. */
export function rawRequest(session: ClientHttp2Session, request: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const stream = session.request(request.headers, { endStream: false });
    let headers: IncomingHttpHeaders | undefined;
    let trailers: IncomingHttpHeaders | undefined;
    let trailersOnly = false;
    const body: Buffer[] = [];
    stream.on('response', (h, flags) => {
      headers = h;
      trailersOnly = (flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0;
    });
    stream.on('trailers', (t) => {
      trailers = t;
    });
    stream.on('data', (chunk: Buffer) => body.push(chunk));
    stream.on('error', () => {});
    stream.on('close', () => {
      if (headers === undefined) {
        reject(new Error(`stream closed without a response (RST_STREAM ${stream.rstCode})`));
        return;
      }
      const fields = trailers ?? headers;
      const status = fields['grpc-status'];
      const message = fields['grpc-message'];
      resolve({
        headers,
        trailers,
        trailersOnly,
        body: Buffer.concat(body),
        rstCode: stream.rstCode ?? 0,
        status: status === undefined ? undefined : Number(status),
        message: typeof message === 'string' ? decodeURIComponent(message) : undefined,
      });
    });
    for (const chunk of request.chunks ?? []) stream.write(chunk);
    if (request.end !== false) stream.end();
  });
}

/** One request on a connection of its own. */
export async function rawCall(port: number, request: RawRequest): Promise<RawResponse> {
  const session = await rawSession(port);
  try {
    return await rawRequest(session, request);
  } finally {
    session.close();
  }
}

/**
 * An HTTP/2 frame (RFC 9113 §4.1), for tests that write frames on a bare TCP connection:
 * what no HTTP/2 client library lets them send.
 */
export function h2Frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, payload]);
}

/** What a client writes first on a bare TCP connection: the connection preface and an empty SETTINGS frame. */
export const CLIENT_PREFACE = Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), h2Frame(4, 0, 0)]);
