/**
 * One HTTP/2 request stream on the server (RFC 9113 (https://www.rfc-editor.org/rfc/rfc9113) §5.1), as the gRPC call sees it: the
 * response headers, DATA within the peer's flow-control windows, the trailers, a reset.
 * No EventEmitter and no Node stream: the call is the stream's one listener.
 */
import { FlowWindows } from './flow.js';
import type { OutgoingFieldValue } from './hpack.js';
import type { RequestHeaders } from './request-fields.js';

export type { RequestHeaders };

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

/** An outgoing header or trailer set. */
export type ResponseFields = Readonly<Record<string, OutgoingFieldValue>>;

/** What a stream asks of its connection (H2Connection): an interface, so stream.ts sits below connection.ts. */
export interface StreamOwner {
  sendHeaders(stream: H2Stream, headers: ResponseFields, endStream: boolean): void;
  sendData(stream: H2Stream, first: Buffer, second: Buffer | undefined): boolean;
  sendTrailers(stream: H2Stream, trailers: ResponseFields): void;
  resetStream(stream: H2Stream, code: number): void;
  returnWindow(stream: H2Stream): void;
  releaseHeld(stream: H2Stream): void;
}

/** A stream is its own flow-control windows (FlowWindows): one object per call. */
export class H2Stream extends FlowWindows {
  readonly id: number;
  readonly connection: StreamOwner;
  listener: StreamListener | undefined = undefined;
  /** The stream is closed: nothing more can be sent on it. */
  closed = false;
  /** The client's END_STREAM arrived. */
  inputEnded = false;
  /** Our END_STREAM is on its way. */
  outputEnded = false;
  /** Flow control is held back: the client may send no more than the window it has. */
  paused = false;
  /** @internal Request bytes counted against the connection's memory ceiling. */
  held = 0;
  /** @internal What the stream itself is charged against that ceiling while open. */
  charged = 0;
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

  constructor(connection: StreamOwner, id: number, sendWindow: number, receiveWindow: number) {
    super(sendWindow, receiveWindow);
    this.connection = connection;
    this.id = id;
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
