/**
 * One HTTP/2 request stream on the server, as the gRPC call sees it (the response headers,
 * DATA within the peer's flow-control windows, the trailers, a reset), and its state as
 * RFC 9113 (https://www.rfc-editor.org/rfc/rfc9113) §5.1 draws it.
 *
 * As in hyperium/h2 (proto/streams/state.rs) and x/net/http2 (streamState), the state is one
 * value, and each frame sent or received is a method that moves it, or answers with the
 * error the RFC names for the move: a stream error (§5.4.2, RST_STREAM) or a connection
 * error (§5.4.1, GOAWAY). The methods never throw; the connection acts on the answer, and
 * never sets a field of a stream: every field here is private.
 *
 *                          +--------+
 *                          |  idle  |
 *                          +--------+
 *                              | recv H
 *                              v
 *                          +--------+
 *                 recv ES  |        |  send ES
 *               ,----------|  open  |----------.
 *              v           |        |           v
 *       +----------+       +--------+       +----------+
 *       |   half   |           |            |   half   |
 *       |  closed  |           | send R /   |  closed  |
 *       | (remote) |           | recv R     | (local)  |
 *       +----------+           v            +----------+
 *            | send ES /   +--------+   recv ES /  |
 *            | send R /    |        |   send R /   |
 *            `-----------> | closed | <------------'
 *              recv R      |        |     recv R
 *                          +--------+
 *
 * The two reserved states are left out, as x/net's server leaves them out: only PUSH_PROMISE
 * reaches them. This server never pushes (reserved (local)), and a client cannot: its
 * PUSH_PROMISE is a connection error PROTOCOL_ERROR (§8.4, connection.ts), so reserved
 * (remote) is never entered either. A stream object exists from the client's HEADERS on;
 * an idle stream id, and a closed one the connection no longer holds, are answered by
 * recvOnIdle and recvOnClosed below, the rules the stream itself follows in those states.
 *
 * No EventEmitter and no Node stream: the call is the stream's one listener.
 */
import type { Buffer } from 'node:buffer';
import { FlowWindows } from './flow.js';
import { H2_ERROR } from './frames.js';
import type { OutgoingFieldValue } from './hpack.js';
import type { RequestHeaders } from './request-fields.js';

export type { RequestHeaders };

/** RFC 9113 §5.1's states a server that never pushes can reach. */
export type StreamState = 'idle' | 'open' | 'half-closed (local)' | 'half-closed (remote)' | 'closed';

/**
 * Why a stream closed (h2's `Cause`): it decides what a frame arriving afterwards means.
 * `end-stream`: both sides sent END_STREAM. `reset-sent`, `reset-received`: RST_STREAM
 * from this side, or from the client. `connection-ended`: the connection went (GOAWAY, an
 * error, the socket closed) with the stream still open.
 */
export type CloseCause = 'end-stream' | 'reset-sent' | 'reset-received' | 'connection-ended';

/** An illegal move, and what the RFC makes of it: which error (§7), on the stream or the whole connection. */
export interface ProtocolError {
  readonly scope: 'stream' | 'connection';
  readonly code: number;
  /** Names the rule and its section; the connection adds the stream id. */
  readonly reason: string;
}

/** The frame is dropped: it is legal to receive, and means nothing now (§5.1 closed). */
export const IGNORE: unique symbol = Symbol('ignore');

/** What a transition answers: undefined when it was made, IGNORE, or the error the move is. */
export type Verdict = ProtocolError | typeof IGNORE | undefined;

/** The frames whose meaning depends on the stream's state (PRIORITY is legal in every state, §5.1). */
export type StateFrame = 'HEADERS' | 'DATA' | 'RST_STREAM' | 'WINDOW_UPDATE';

function streamError(code: number, reason: string): ProtocolError {
  return Object.freeze({ scope: 'stream', code, reason });
}

function connectionError(code: number, reason: string): ProtocolError {
  return Object.freeze({ scope: 'connection', code, reason });
}

/** The answers, made once: a transition allocates nothing. */
const ERRORS = {
  dataOnIdle: connectionError(H2_ERROR.PROTOCOL_ERROR, 'DATA on an idle stream (§5.1, §6.1)'),
  resetOnIdle: connectionError(H2_ERROR.PROTOCOL_ERROR, 'RST_STREAM on an idle stream (§5.1, §6.4)'),
  windowUpdateOnIdle: connectionError(H2_ERROR.PROTOCOL_ERROR, 'WINDOW_UPDATE on an idle stream (§5.1)'),
  afterEndStream: streamError(H2_ERROR.STREAM_CLOSED, 'a frame after the END_STREAM of the peer (§5.1 half-closed (remote))'),
  dataOnClosed: streamError(H2_ERROR.STREAM_CLOSED, 'DATA on a closed stream (§6.1)'),
  headersOnClosed: connectionError(H2_ERROR.STREAM_CLOSED, 'HEADERS on a closed stream (§5.1 closed)'),
  idReused: connectionError(H2_ERROR.PROTOCOL_ERROR, 'HEADERS on a stream id not above the last one (§5.1.1)'),
  trailersWithoutEnd: streamError(H2_ERROR.PROTOCOL_ERROR, 'a second header block without END_STREAM (§8.1)'),
  sendOnIdle: connectionError(H2_ERROR.PROTOCOL_ERROR, 'a frame on a stream nobody opened (§5.1.1: a server opens only pushed ones)'),
  sendAfterEnd: streamError(H2_ERROR.STREAM_CLOSED, 'a frame after this side ended or reset the stream (§5.1)'),
} as const;

/**
 * §5.1 idle: "Receiving any frame other than HEADERS or PRIORITY on a stream in this state
 * MUST be treated as a connection error ... of type PROTOCOL_ERROR."
 *
 * @example
 * ```ts
 * recvOnIdle('DATA'); // { scope: 'connection', code: H2_ERROR.PROTOCOL_ERROR, reason: 'DATA on an idle stream (§5.1, §6.1)' }
 * ```
 */
export function recvOnIdle(frame: Exclude<StateFrame, 'HEADERS'>): ProtocolError {
  if (frame === 'DATA') return ERRORS.dataOnIdle;
  return frame === 'RST_STREAM' ? ERRORS.resetOnIdle : ERRORS.windowUpdateOnIdle;
}

/**
 * §5.1 closed: what a frame on a closed stream means, by why it closed; `cause` undefined is
 * a stream closed so long ago that the connection forgot it (RECENTLY_CLOSED in connection.ts).
 *
 * @example
 * ```ts
 * recvOnClosed('DATA', 'reset-sent'); // IGNORE
 * recvOnClosed('DATA', 'end-stream'); // { scope: 'stream', code: H2_ERROR.STREAM_CLOSED, ... }
 * ```
 */
export function recvOnClosed(frame: StateFrame, cause: CloseCause | undefined): Verdict {
  // "An endpoint MUST ignore frames that it receives on closed streams after it has sent a
  // RST_STREAM frame"; after the connection ended nothing is read.
  if (cause === 'reset-sent' || cause === 'connection-ended') return IGNORE;
  // WINDOW_UPDATE and RST_STREAM may cross our END_STREAM or RST_STREAM; an RST_STREAM is
  // never answered with one (§5.4.2).
  if (frame === 'RST_STREAM' || frame === 'WINDOW_UPDATE') return IGNORE;
  // Forgotten: it may be one this side reset, whose frames are ignored (DATA); a HEADERS
  // there reuses an id (§5.1.1).
  if (cause === undefined) return frame === 'DATA' ? IGNORE : ERRORS.idReused;
  return frame === 'DATA' ? ERRORS.dataOnClosed : ERRORS.headersOnClosed;
}

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

/**
 * A stream is its own flow-control windows (FlowWindows): one object per call.
 *
 * @example
 * ```ts
 * // In the connection: the client's DATA, its END_STREAM, and what the move answers.
 * const verdict = stream.recvData(endStream);
 * if (verdict !== undefined) return act(verdict, stream); // IGNORE, RST_STREAM or GOAWAY
 * ```
 */
export class H2Stream extends FlowWindows {
  readonly id: number;
  readonly #owner: StreamOwner;
  #listener: StreamListener | undefined = undefined;
  #state: StreamState = 'idle';
  #cause: CloseCause | undefined = undefined;
  /** Flow control is held back: the client may send no more than the window it has. */
  #paused = false;
  /** Request bytes counted against the connection's memory ceiling. */
  #held = 0;
  /** What the stream itself is charged against that ceiling while open. */
  #charged: number;
  /** content-length of the request, or -1; and the DATA bytes received (§8.1.1). */
  readonly #contentLength: number;
  #dataReceived = 0;
  /** DATA waiting for window, in order, and its length. */
  readonly #queue: Buffer[] = [];
  #queuedBytes = 0;
  /** Response headers waiting for send window, to go out with the first DATA. */
  #heldHeaders: Buffer | undefined = undefined;
  /** The encoded trailers, sent once the queue is empty. */
  #pendingTrailers: Buffer | undefined = undefined;
  /** The call's writer was told to wait (a write returned false) and has not been told it may go on. */
  #needDrain = false;

  /** `charged`: what the connection charged for the stream; `contentLength`: the request's, or -1. */
  constructor(owner: StreamOwner, id: number, sendWindow: number, receiveWindow: number, charged = 0, contentLength = -1) {
    super(sendWindow, receiveWindow);
    this.#owner = owner;
    this.id = id;
    this.#charged = charged;
    this.#contentLength = contentLength;
  }

  // --- for the call ---

  /** @internal The call that takes the stream registers itself (once, as it starts). */
  set listener(listener: StreamListener) {
    this.#listener = listener;
  }

  /** Sends the response headers; `endStream` makes them the whole response (Trailers-Only). */
  respond(headers: ResponseFields, endStream: boolean): void {
    this.#owner.sendHeaders(this, headers, endStream);
  }

  /**
   * Sends `first` and `second` as one stretch of DATA. Returns false once the stream holds
   * more than its high-water mark unsent (or the socket is backed up): `drained` follows.
   */
  write(first: Buffer, second?: Buffer): boolean {
    return this.#owner.sendData(this, first, second);
  }

  /** Ends the response with `trailers` (HEADERS with END_STREAM) after the DATA written. */
  end(trailers: ResponseFields): void {
    this.#owner.sendTrailers(this, trailers);
  }

  /** Closes the stream now with RST_STREAM `code` (NO_ERROR, CANCEL...). */
  reset(code: number): void {
    this.#owner.resetStream(this, code);
  }

  /** Stops returning flow-control window: the client stops once it has sent what it may. */
  pause(): void {
    this.#paused = true;
  }

  /** Returns the window held back by `pause`. */
  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.#owner.returnWindow(this);
  }

  /** The request bytes received so far are no longer held (a whole message was taken). */
  release(): void {
    this.#owner.releaseHeld(this);
  }

  // --- the state (§5.1) ---

  get state(): StreamState {
    return this.#state;
  }

  /** Why the stream closed; undefined while it is not closed. */
  get closeCause(): CloseCause | undefined {
    return this.#cause;
  }

  /** The stream is closed: nothing more can be sent on it. */
  get closed(): boolean {
    return this.#state === 'closed';
  }

  /** The client sends nothing more: its END_STREAM came, or the stream closed. */
  get recvClosed(): boolean {
    return this.#state === 'half-closed (remote)' || this.#state === 'closed';
  }

  /** This side sends nothing more: its END_STREAM went, or the stream closed. */
  get sendClosed(): boolean {
    return this.#state === 'half-closed (local)' || this.#state === 'closed';
  }

  /**
   * HEADERS from the client. On an idle stream they open it (§5.1: open, or half-closed
   * (remote) with END_STREAM); on an open one they are trailers, which end the stream (§8.1).
   */
  recvHeaders(endStream: boolean): Verdict {
    switch (this.#state) {
      case 'idle':
        this.#state = endStream ? 'half-closed (remote)' : 'open';
        return undefined;
      case 'open':
      case 'half-closed (local)':
        if (!endStream) return ERRORS.trailersWithoutEnd;
        return this.#recvEndStream();
      case 'half-closed (remote)':
        return ERRORS.afterEndStream;
      case 'closed':
        return recvOnClosed('HEADERS', this.#cause);
    }
  }

  /** DATA from the client (§6.1): only on a stream open on its side; END_STREAM half-closes it. */
  recvData(endStream: boolean): Verdict {
    switch (this.#state) {
      case 'idle':
        return recvOnIdle('DATA');
      case 'open':
      case 'half-closed (local)':
        return endStream ? this.#recvEndStream() : undefined;
      case 'half-closed (remote)':
        return ERRORS.afterEndStream;
      case 'closed':
        return recvOnClosed('DATA', this.#cause);
    }
  }

  /** RST_STREAM from the client (§6.4): the stream closes. */
  recvRstStream(): Verdict {
    if (this.#state === 'idle') return recvOnIdle('RST_STREAM');
    if (this.#state === 'closed') return recvOnClosed('RST_STREAM', this.#cause);
    this.#close('reset-received');
    return undefined;
  }

  /** WINDOW_UPDATE from the client: legal in every state but idle (§5.1, §6.9); it changes none. */
  recvWindowUpdate(): Verdict {
    if (this.#state === 'idle') return recvOnIdle('WINDOW_UPDATE');
    if (this.#state === 'closed') return recvOnClosed('WINDOW_UPDATE', this.#cause);
    return undefined;
  }

  /**
   * HEADERS from this side: the response headers, or with END_STREAM the trailers (or a
   * Trailers-Only response), which half-close it or close it (§5.1). The error is the one
   * the client would answer the frame with.
   */
  sendHeaders(endStream: boolean): Verdict {
    return this.#send(endStream);
  }

  /** DATA from this side (§6.1). This server ends a response with trailers, so its DATA never carries END_STREAM. */
  sendData(endStream: boolean): Verdict {
    return this.#send(endStream);
  }

  /** RST_STREAM from this side (§6.4): the stream closes; one already closed sends none. */
  sendRstStream(): Verdict {
    if (this.#state === 'idle') return ERRORS.sendOnIdle;
    if (this.#state === 'closed') return ERRORS.sendAfterEnd;
    this.#close('reset-sent');
    return undefined;
  }

  /** The connection ended with the stream still open (h2's `handle_error`, `recv_eof`). */
  connectionEnded(): Verdict {
    if (this.#state === 'closed') return IGNORE;
    this.#close('connection-ended');
    return undefined;
  }

  /** The client's END_STREAM: open -> half-closed (remote), half-closed (local) -> closed. */
  #recvEndStream(): undefined {
    if (this.#state === 'open') this.#state = 'half-closed (remote)';
    else this.#close('end-stream');
    return undefined;
  }

  #send(endStream: boolean): Verdict {
    switch (this.#state) {
      case 'idle':
        return ERRORS.sendOnIdle;
      case 'open':
        if (endStream) this.#state = 'half-closed (local)';
        return undefined;
      case 'half-closed (remote)':
        if (endStream) this.#close('end-stream');
        return undefined;
      default:
        return ERRORS.sendAfterEnd;
    }
  }

  #close(cause: CloseCause): void {
    this.#state = 'closed';
    this.#cause = cause;
  }

  // --- for the connection: what the stream holds ---

  /** Flow control is held back (`pause`). */
  get paused(): boolean {
    return this.#paused;
  }

  /** The DATA received matches the request's content-length, or it announced none (§8.1.1). */
  get contentLengthMet(): boolean {
    return this.#contentLength < 0 || this.#contentLength === this.#dataReceived;
  }

  /** `size` bytes of DATA payload received, held against the memory ceiling until released. */
  received(size: number): void {
    this.#dataReceived += size;
    this.#held += size;
  }

  /** Releases the request bytes held: how many they were. */
  takeHeld(): number {
    const held = this.#held;
    this.#held = 0;
    return held;
  }

  /** The stream closed: releases all it was charged for (its own cost and the request bytes held). */
  releaseCharges(): number {
    const bytes = this.#held + this.#charged;
    this.#held = 0;
    this.#charged = 0;
    return bytes;
  }

  /** Bytes of DATA waiting for window. */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** DATA waits for window (perhaps of no length). */
  get hasQueued(): boolean {
    return this.#queue.length > 0;
  }

  get hasHeldHeaders(): boolean {
    return this.#heldHeaders !== undefined;
  }

  get hasPendingTrailers(): boolean {
    return this.#pendingTrailers !== undefined;
  }

  /** Response headers wait for window; returns the block they replace, if one waited. */
  holdHeaders(block: Buffer): Buffer | undefined {
    const replaced = this.#heldHeaders;
    this.#heldHeaders = block;
    return replaced;
  }

  /** The headers that waited, to go out now. */
  takeHeldHeaders(): Buffer | undefined {
    const held = this.#heldHeaders;
    this.#heldHeaders = undefined;
    return held;
  }

  /** The trailers wait behind the queued DATA. */
  holdTrailers(block: Buffer): void {
    this.#pendingTrailers = block;
  }

  /** The trailers that waited, to go out now. */
  takeTrailers(): Buffer | undefined {
    const trailers = this.#pendingTrailers;
    this.#pendingTrailers = undefined;
    return trailers;
  }

  /** DATA (`length` bytes in one or two buffers) waits for window, behind what already waits. */
  enqueue(first: Buffer, second: Buffer | undefined, length: number): void {
    this.#queue.push(first);
    if (second !== undefined) this.#queue.push(second);
    this.#queuedBytes += length;
  }

  /** The next queued DATA, at most `room` (> 0) bytes of it. Only while `hasQueued`. */
  dequeue(room: number): Buffer {
    const queue = this.#queue;
    const head = queue[0] as Buffer;
    let chunk = head;
    if (head.length <= room) queue.shift();
    else {
      chunk = head.subarray(0, room);
      queue[0] = head.subarray(room);
    }
    this.#queuedBytes -= chunk.length;
    return chunk;
  }

  /** The stream closed: what waited to be sent is dropped; returns its length. */
  dropUnsent(): number {
    const unsent = this.#queuedBytes + (this.#heldHeaders?.length ?? 0) + (this.#pendingTrailers?.length ?? 0);
    this.#heldHeaders = undefined;
    this.#pendingTrailers = undefined;
    this.#queue.length = 0;
    this.#queuedBytes = 0;
    return unsent;
  }

  // --- for the connection: what the call is told ---

  /** A DATA payload for the call. */
  deliver(chunk: Buffer): void {
    this.#listener?.data(chunk);
  }

  /** Tells the call the client's END_STREAM came. */
  announceInputEnd(): void {
    this.#listener?.inputEnd();
  }

  /** Tells the call the stream closed. */
  announceClosed(): void {
    this.#listener?.streamClosed();
  }

  /**
   * Marks the call's writer as waiting: a write returned false because the stream's queue or
   * the socket is full, so the writer stops until `drained`, as a Node stream writer does.
   */
  oweDrain(): void {
    this.#needDrain = true;
  }

  /**
   * Tells a waiting writer that the queue and the socket have room again. Only a writer that
   * was told to wait hears it, once per wait, as a Node writable emits 'drain' only after a
   * write returned false.
   */
  payDrain(): void {
    if (!this.#needDrain) return;
    this.#needDrain = false;
    this.#listener?.drained();
  }
}
