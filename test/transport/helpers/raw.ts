/**
 * A bare node:http2 client, and frames for a bare TCP connection, for what gRPC clients
 * never send (bad headers, malformed frames, a wrong content-type) and for what they hide
 * (Trailers-Only, RST_STREAM codes, the compressed flag of a response).
 */
import { type ClientHttp2Session, type IncomingHttpHeaders, type OutgoingHttpHeaders, connect, constants } from 'node:http2';
import { type Socket, connect as connectTcp } from 'node:net';

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

/** A length-prefixed message: flag, big-endian length, bytes (the kit's `grpcFrame`, named beside `h2Frame`). */
export { grpcFrame as frame } from '../../../bench/kit/grpc-body.js';

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
 * A raw node:http2 session to 127.0.0.1:`port` whose SETTINGS exchange is done: the
 * server's limits (header list size) apply only once the client has acknowledged them,
 * which it does before any request it sends after this resolves. Rejects after
 * `timeoutMs`. Once connected, session errors are left to each stream (a test that drops
 * or is dropped by the server must not die of the session's 'error' event).
 */
export function rawSession(port: number, timeoutMs = 5000): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = connect(`http://127.0.0.1:${port}`, { maxSendHeaderBlockLength: 1 << 20 });
    const timer = setTimeout(() => {
      session.destroy();
      reject(new Error(`HTTP/2 connect to 127.0.0.1:${port} timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    session.once('remoteSettings', () => {
      clearTimeout(timer);
      session.on('error', () => {});
      resolve(session);
    });
    session.once('error', (error) => {
      clearTimeout(timer);
      session.destroy();
      reject(error);
    });
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

/** An HPACK literal without indexing, new name, no Huffman (RFC 7541 §6.2.2); names and values under 127 bytes. */
export function hpackLiteral(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)]);
}

/** A gRPC request's header block (POST, http, `path`, :authority, content-type, te), then `extra` literals. */
export function requestBlock(path: string, extra: readonly (readonly [string, string])[] = []): Buffer {
  return Buffer.concat([
    // :method POST and :scheme http are static entries 3 and 6; :path is a literal of static name 4.
    Buffer.from([0x83, 0x86, 0x04, path.length]),
    Buffer.from(path),
    hpackLiteral(':authority', 'localhost'),
    hpackLiteral('content-type', 'application/grpc'),
    hpackLiteral('te', 'trailers'),
    ...extra.map(([name, value]) => hpackLiteral(name, value)),
  ]);
}

/** A frame the server sent. */
export interface ServerFrame {
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
  readonly payload: Buffer;
}

/** HTTP/2 frame types and flags the raw tests use (RFC 9113 §6). */
export const FRAME_TYPE = {
  DATA: 0,
  HEADERS: 1,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  WINDOW_UPDATE: 8,
  CONTINUATION: 9,
} as const;
export const FRAME_FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const;

/**
 * A bare TCP connection that speaks HTTP/2 frame by frame: the preface and `settings`
 * (SETTINGS payload) go out at once, the server's SETTINGS are acknowledged, and every
 * frame the server sends is kept, to wait for.
 */
export class FrameConnection {
  readonly frames: ServerFrame[] = [];
  readonly closed: Promise<void>;
  readonly #socket: Socket;
  #pending = Buffer.alloc(0);
  readonly #waiters = new Set<() => void>();

  private constructor(socket: Socket) {
    this.#socket = socket;
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    socket.on('close', () => this.#wake());
  }

  /** `localAddress`: the client's address, another of 127.0.0.0/8 (all of it is loopback on Linux) for a second client. */
  static open(port: number, settings: Buffer = Buffer.alloc(0), localAddress = '127.0.0.1'): Promise<FrameConnection> {
    return new Promise((resolve, reject) => {
      const socket = connectTcp({ port, host: '127.0.0.1', localAddress }, () => {
        socket.write(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), h2Frame(FRAME_TYPE.SETTINGS, 0, 0, settings)]));
        resolve(new FrameConnection(socket));
      });
      socket.once('error', reject);
    });
  }

  send(...frames: Buffer[]): void {
    this.#socket.write(Buffer.concat(frames));
  }

  /** The first frame received (or yet to come) that `matches`; rejects after `timeoutMs` or when the connection closes first. */
  async waitFor(matches: (frame: ServerFrame) => boolean, timeoutMs = 2000): Promise<ServerFrame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.find(matches);
      if (found !== undefined) return found;
      if (this.#socket.destroyed) throw new Error('the connection closed first');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no such frame within ${timeoutMs} ms; got types ${this.frames.map((f) => f.type).join(',')}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(wake, left);
        const waiters = this.#waiters;
        function wake(): void {
          clearTimeout(timer);
          waiters.delete(wake);
          resolve();
        }
        waiters.add(wake);
      });
    }
  }

  /** The frames of one stream, in order. */
  onStream(streamId: number): ServerFrame[] {
    return this.frames.filter((frame) => frame.streamId === streamId);
  }

  close(): void {
    this.#socket.destroy();
  }

  /** Half-closes TCP: the client sends nothing more, and still reads. */
  end(): void {
    this.#socket.end();
  }

  #read(chunk: Buffer): void {
    let buffer = Buffer.concat([this.#pending, chunk]);
    while (buffer.length >= 9) {
      const length = buffer.readUIntBE(0, 3);
      if (buffer.length < 9 + length) break;
      const frame = {
        type: buffer[3] as number,
        flags: buffer[4] as number,
        streamId: buffer.readUInt32BE(5) & 0x7fffffff,
        payload: buffer.subarray(9, 9 + length),
      };
      this.frames.push(frame);
      const ack = frame.type === FRAME_TYPE.SETTINGS && (frame.flags & FRAME_FLAG.ACK) === 0;
      if (ack && this.#socket.writable) this.send(h2Frame(FRAME_TYPE.SETTINGS, FRAME_FLAG.ACK, 0));
      buffer = buffer.subarray(9 + length);
    }
    this.#pending = Buffer.from(buffer);
    this.#wake();
  }

  #wake(): void {
    for (const wake of [...this.#waiters]) wake();
  }
}
