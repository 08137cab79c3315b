/**
 * One HTTP/2 request stream on the server (RFC 9113 §5.1), as the gRPC call sees it: the
 * response headers, DATA within the peer's flow-control windows, the trailers, a reset.
 * No EventEmitter and no Node stream: the call is the stream's one listener.
 */
import type { H2Connection } from './connection.js';
import type { OutgoingFieldValue } from './hpack.js';

/** What a stream tells the one call it carries. */
export interface StreamListener {
  /** A DATA payload of the request (a view of the socket's read buffer: copy what you keep past this call). */
  data(chunk: Buffer): void;
  /** The client half-closed the stream (END_STREAM). */
  inputEnd(): void;
  /** The stream closed: the response is out, or it was reset by either side, or the connection is gone. */
  streamClosed(): void;
  /** `write` returned false earlier, and the stream can take more now. */
  drained(): void;
}

/** A request's header fields by name; a repeated name has its values joined with ", ". */
export type RequestHeaders = Readonly<Record<string, string | undefined>>;

/** An outgoing header or trailer set. */
export type ResponseFields = Readonly<Record<string, OutgoingFieldValue>>;

export class H2Stream {
  readonly id: number;
  readonly connection: H2Connection;
  listener: StreamListener | undefined = undefined;
  /** The stream is closed: nothing more can be sent on it. */
  closed = false;
  /** The client's END_STREAM arrived. */
  inputEnded = false;
  /** Our END_STREAM is on its way. */
  outputEnded = false;
  /** Flow control is held back: the client may send no more than the window it has. */
  paused = false;
  /** @internal Bytes the client may still send on this stream. */
  receiveWindow: number;
  /** @internal Received bytes not yet returned to the client by WINDOW_UPDATE. */
  unacknowledged = 0;
  /** @internal Request bytes counted against the connection's memory ceiling. */
  held = 0;
  /** @internal What the stream itself is charged against that ceiling while open. */
  charged = 0;
  /** @internal Bytes this side may still send (the peer's stream window). */
  sendWindow: number;
  /** @internal DATA waiting for window, in order. */
  readonly queue: Buffer[] = [];
  queuedBytes = 0;
  /** @internal Response headers waiting for send window, to go out with the first DATA. */
  heldHeaders: Buffer | undefined = undefined;
  /** @internal The encoded trailers, sent once the queue is empty. */
  pendingTrailers: Buffer | undefined = undefined;
  /** @internal A write returned false: `drained` is owed. */
  needDrain = false;
  /** @internal content-length of the request, or -1; and the DATA bytes received. */
  contentLength = -1;
  dataReceived = 0;

  constructor(connection: H2Connection, id: number, sendWindow: number, receiveWindow: number) {
    this.connection = connection;
    this.id = id;
    this.sendWindow = sendWindow;
    this.receiveWindow = receiveWindow;
  }

  /** Sends the response headers; `endStream` makes them the whole response (Trailers-Only). */
  respond(headers: ResponseFields, endStream: boolean): void {
    this.connection.sendHeaders(this, headers, endStream);
  }

  /**
   * Sends `first` and `second` as one stretch of DATA. Returns false once the stream holds
   * more than its high-water mark unsent (or the socket is backed up): `drained` follows.
   */
  write(first: Buffer, second?: Buffer): boolean {
    return this.connection.sendData(this, first, second);
  }

  /** Ends the response with `trailers` (HEADERS with END_STREAM) after the DATA written. */
  end(trailers: ResponseFields): void {
    this.connection.sendTrailers(this, trailers);
  }

  /** Closes the stream now with RST_STREAM `code` (NO_ERROR, CANCEL...). */
  reset(code: number): void {
    this.connection.resetStream(this, code);
  }

  /** Stops returning flow-control window: the client stops once it has sent what it may. */
  pause(): void {
    this.paused = true;
  }

  /** Returns the window held back by `pause`. */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.connection.returnWindow(this);
  }

  /** The request bytes received so far are no longer held (a whole message was taken). */
  release(): void {
    this.connection.releaseHeld(this);
  }
}
