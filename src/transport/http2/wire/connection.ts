/**
 * The server side of one HTTP/2 connection (RFC 9113 (https://www.rfc-editor.org/rfc/rfc9113)) on a node:net or node:tls socket:
 * stream states, flow control both ways, SETTINGS, PING, GOAWAY, and the guards a server
 * on the open internet needs (docs/http2-limits.md lists them).
 *
 * The wire layer, bottom to top; a file imports only files below it:
 *   frames (constants, frame builders, ConnectionError) -> limits -> parse (reading
 *   frames) -> header-block -> flow (windows) -> budget (token buckets, memory
 *   ledgers) -> process-memory (the process's one ledger) -> pings ->
 *   huffman -> request-fields -> hpack -> writer -> stream -> connection.
 * test/transport/wire-layers.test.ts holds the folder to it.
 *
 * Why not node:http2: it costs most of a small gRPC call (nghttp2, a Duplex per stream,
 * header objects converted twice); bench/PERFORMANCE.md measures it.
 */
import { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Budget, MemoryLedger, type PeerLedger, type PeerLedgers } from './budget.js';
import { FlowWindows } from './flow.js';
import {
  CLIENT_PREFACE,
  ConnectionError,
  DEFAULT_WINDOW_SIZE,
  FLAG,
  FRAME,
  H2_ERROR,
  MIN_MAX_FRAME_SIZE,
  SETTING,
  SETTINGS_ACK,
  frame,
  goawayFrame,
  rstStreamFrame,
  settingsFrame,
  windowUpdateFrame,
} from './frames.js';
import { HeaderBlockAssembler } from './header-block.js';
import { HpackDecoder, HpackError, encodeHeaderBlock } from './hpack.js';
import {
  DRIBBLE_BYTES,
  END_FLUSH_MS,
  GLITCH_BURST,
  GLITCH_RATE,
  HANDSHAKE_TIMEOUT_MS,
  MAX_QUEUED_CONTROL_ANSWERS,
  PROCESS_MEMORY_READER_RESERVE,
  PROCESS_MEMORY_READER_SHARE,
  READER_PROGRESS_MS,
  REFUSED_STREAM_BURST,
  REFUSED_STREAM_RATE,
  STALL_CHECKS_PER_BOUND,
  STREAM_COST_BYTES,
} from './limits.js';
import {
  FrameFields,
  SettingsFields,
  readData,
  readFrame,
  readGoaway,
  readHeaders,
  readPing,
  readPriority,
  readRstStream,
  readSettings,
  readWindowUpdate,
} from './parse.js';
import { OutstandingPings } from './pings.js';
import { type RequestHeaders, validTrailerFields, validateRequestFields } from './request-fields.js';
import {
  type CloseCause,
  H2Stream,
  IGNORE,
  type ResponseFields,
  type StateFrame,
  type StreamOwner,
  type Verdict,
  recvOnClosed,
  recvOnIdle,
} from './stream.js';
import { FrameWriter, endSocket } from './writer.js';

/** What a connection enforces and advertises; resolved once per server. */
export interface ConnectionLimits {
  /** SETTINGS_MAX_CONCURRENT_STREAMS: more open streams are refused (REFUSED_STREAM). */
  readonly maxConcurrentStreams: number;
  /** SETTINGS_MAX_HEADER_LIST_SIZE: a larger request is reset (ENHANCE_YOUR_CALM). */
  readonly maxHeaderListBytes: number;
  /**
   * Memory the connection may hold: each open stream (STREAM_COST_BYTES plus its header
   * list), request bytes not yet taken, and encoded answers waiting for the client's
   * flow-control window. Past it new streams are refused and the stream whose DATA
   * crosses it is reset.
   */
  readonly maxHeldBytes: number;
  /**
   * The same, counted across every connection that shares `processMemory`, and its
   * ceiling: past it, new streams are refused on a connection whose answers wait for
   * window, and on every connection past a reserve above it (PROCESS_MEMORY_READER_RESERVE).
   * Absent: no process-wide ceiling.
   */
  readonly processMemory?: MemoryLedger;
  readonly maxProcessHeldBytes?: number;
  /**
   * The same per client address, and what one may hold over all its connections (its
   * share of the process's ceiling): past it its new streams are refused. Absent: no share.
   */
  readonly peerMemory?: PeerLedgers;
  readonly maxPeerHeldBytes?: number;
  /**
   * How long answers may wait for flow-control window with none of their bytes sent
   * before the connection is closed (GOAWAY ENHANCE_YOUR_CALM). Absent: no bound.
   */
  readonly maxStallMs?: number;
  /** RST_STREAM frames a client may send in a burst, and per second after it (Rapid Reset guard). */
  readonly resetBurst: number;
  readonly resetRate: number;
  /** How long a connection has to send the preface and its first SETTINGS. Default HANDSHAKE_TIMEOUT_MS. */
  readonly handshakeTimeoutMs?: number;
}

/** What a connection tells its owner. */
export interface ConnectionEvents {
  /** A new request stream with its validated headers; `fields` is the raw list (name, value, ...). */
  stream(stream: H2Stream, headers: RequestHeaders, fields: readonly string[]): void;
  /** The client sent a PING (not an ack). */
  ping(): void;
  /** The client sent GOAWAY. */
  goaway(): void;
  /** The socket closed; every stream is closed. */
  closed(): void;
  /** Handling a frame threw what no frame should cause (a defect): the connection ends with INTERNAL_ERROR, the process goes on. */
  internalError(err: unknown): void;
  /** The connection ends before its preface and first SETTINGS: none in time (`timeout`), or not an HTTP/2 client (`preface`). */
  handshakeFailed?(reason: 'timeout' | 'preface'): void;
}

/** The window each request stream starts with: a request up to this size needs no WINDOW_UPDATE. */
export const STREAM_WINDOW = 1 << 20;
/** The connection's receive window, topped up once half is used. */
export const CONNECTION_WINDOW = 16 << 20;
/** Unsent response bytes a stream holds before `write` asks the writer to wait. */
export const STREAM_HIGH_WATER_MARK = 64 << 10;
/** Closed stream ids remembered, to tell a frame on a closed stream from one on a stream never opened. */
const RECENTLY_CLOSED = 128;
/** RFC 7541 (https://www.rfc-editor.org/rfc/rfc7541) §6.3: a dynamic table size update to 0, for a peer that lowers SETTINGS_HEADER_TABLE_SIZE. */
const TABLE_SIZE_ZERO = Buffer.from([0x20]);

export class H2Connection implements StreamOwner {
  readonly socket: Socket;
  readonly #limits: ConnectionLimits;
  readonly #events: ConnectionEvents;
  readonly #hpack = new HpackDecoder();
  readonly #streams = new Map<number, H2Stream>();
  /** Recently closed stream ids -> why they closed: what a late frame on one means (§5.1, stream.ts recvOnClosed). */
  readonly #recentlyClosed = new Map<number, CloseCause>();
  /** The ids in #recentlyClosed in the order they closed, a ring: the one to forget next is at #closedNext. */
  readonly #closedOrder: (number | undefined)[] = new Array<number | undefined>(RECENTLY_CLOSED).fill(undefined);
  #closedNext = 0;
  /** Streams with DATA waiting for the connection's send window, in order. */
  readonly #blocked = new Set<H2Stream>();
  readonly #pings = new OutstandingPings();
  #pending: Buffer | undefined = undefined;
  #prefaceSeen = false;
  #settingsSeen = false;
  readonly #headerBlock: HeaderBlockAssembler;
  /** The largest stream id the client opened, and the largest given to the owner. */
  #lastStreamId = 0;
  #lastProcessedId = 0;
  /** The last stream id of the GOAWAY sent, once one is: streams above it are ignored. */
  #goawayLastId = Number.POSITIVE_INFINITY;
  /** The connection's own windows (§6.9.1). */
  readonly #flow = new FlowWindows(DEFAULT_WINDOW_SIZE, CONNECTION_WINDOW);
  /** The frame being read, and the SETTINGS being read: one of each per connection, so reading allocates nothing. */
  readonly #frame = new FrameFields();
  readonly #settings = new SettingsFields();
  #peerInitialWindow = DEFAULT_WINDOW_SIZE;
  #peerMaxFrameSize = MIN_MAX_FRAME_SIZE;
  /** Bytes charged against the memory ceilings (ConnectionLimits.maxHeldBytes), all of them also charged to #process. */
  #held = 0;
  readonly #process: MemoryLedger;
  /** The process-wide ceiling; the reserve above it for connections that read; what one of those may hold in it. */
  readonly #processCeiling: number;
  readonly #processReaderCeiling: number;
  readonly #processReaderShare: number;
  /** What this connection's client address holds over all its connections, and may hold. */
  readonly #peer: PeerLedger | undefined;
  readonly #peerCeiling: number;
  /** Request bytes read and answers written so far, and when a look at it last saw it move: whether this connection reads (#reads). */
  #activity = 0;
  #activitySeen = 0;
  #activeAt: number;
  /** Bytes of encoded answers (headers, DATA, trailers) waiting for flow-control window, part of #held. */
  #waiting = 0;
  /** Answer bytes sent from the waiting queues so far: the stall check watches it move. */
  #progress = 0;
  #progressSeen = 0;
  /** Stall checks in a row that found answers waiting and no progress. */
  #stalledChecks = 0;
  #stallTimer: NodeJS.Timeout | undefined = undefined;
  /** The Rapid Reset guard (CVE-2023-44487): RST_STREAM frames, and streams the client makes this side reset. */
  readonly #resets: Budget;
  /** Invalid or useless frames (limits.ts, GLITCH_BURST). */
  readonly #glitches = new Budget(GLITCH_BURST, GLITCH_RATE);
  /** Streams refused with REFUSED_STREAM (limits.ts, REFUSED_STREAM_BURST). */
  readonly #refusals = new Budget(REFUSED_STREAM_BURST, REFUSED_STREAM_RATE);
  /** Until the preface and the first SETTINGS are in. */
  #handshakeTimer: NodeJS.Timeout | undefined;
  readonly #writer: FrameWriter;
  /** The peer lowered its HPACK table size: the next header block starts with a size update to 0. */
  #tableSizeUpdate = false;
  #tableSizeZero = false;
  /** close(): no new streams; the socket ends once the last stream closes. */
  #closing = false;
  /** A connection error paused the socket for good. */
  #stoppedReading = false;
  /** Ending or gone: nothing more is read or sent. */
  #ended = false;
  #destroyed = false;

  /**
   * `handshakeTimeoutMs`: this connection's time for its preface and first SETTINGS, when
   * less than the limits' (what TLS left of the deadline). `peer`: who the client is, for
   * its share of the process's memory (connection-guard.ts peerKey).
   */
  constructor(
    socket: Socket,
    limits: ConnectionLimits,
    events: ConnectionEvents,
    handshakeTimeoutMs = limits.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS,
    peer = 'unknown',
  ) {
    this.socket = socket;
    this.#limits = limits;
    this.#events = events;
    this.#resets = new Budget(limits.resetBurst, limits.resetRate);
    this.#process = limits.processMemory ?? new MemoryLedger();
    this.#processCeiling = limits.maxProcessHeldBytes ?? Number.POSITIVE_INFINITY;
    this.#processReaderCeiling = this.#processCeiling * (1 + PROCESS_MEMORY_READER_RESERVE);
    this.#processReaderShare = this.#processCeiling * PROCESS_MEMORY_READER_SHARE;
    this.#peer = limits.peerMemory?.join(peer);
    this.#peerCeiling = limits.maxPeerHeldBytes ?? Number.POSITIVE_INFINITY;
    this.#activeAt = performance.now();
    this.#writer = new FrameWriter(socket, MAX_QUEUED_CONTROL_ANSWERS);
    this.#headerBlock = new HeaderBlockAssembler(limits.maxHeaderListBytes);
    this.#handshakeTimer = setTimeout(() => this.#handshakeTimedOut(), handshakeTimeoutMs);
    this.#handshakeTimer.unref();
    socket.setNoDelay(true);
    this.#queue(
      settingsFrame([
        [SETTING.ENABLE_PUSH, 0],
        [SETTING.MAX_CONCURRENT_STREAMS, limits.maxConcurrentStreams],
        [SETTING.INITIAL_WINDOW_SIZE, STREAM_WINDOW],
        [SETTING.MAX_HEADER_LIST_SIZE, limits.maxHeaderListBytes],
      ]),
    );
    this.#queue(windowUpdateFrame(0, CONNECTION_WINDOW - DEFAULT_WINDOW_SIZE));
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('drain', () => this.#onDrain());
    socket.on('end', () => this.#onPeerEnd());
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.#onSocketClose());
  }

  /** close() was called, or the connection is ending or gone. */
  get closed(): boolean {
    return this.#closing || this.#ended;
  }

  get destroyed(): boolean {
    return this.#destroyed;
  }

  // --- for the owner ---

  /** Sends a PING; `callback` runs on its ack (null) or when the connection ends (an Error). False when too many are outstanding. */
  ping(callback: (err: Error | null) => void): boolean {
    if (this.#ended) return false;
    const payload = this.#pings.start(callback);
    if (payload === undefined) return false;
    this.#queue(frame(FRAME.PING, 0, 0, payload));
    return true;
  }

  /** Sends GOAWAY: streams above `lastStreamId` the client opens from now on are ignored. */
  goaway(code: number, lastStreamId: number, debugData: string): void {
    if (this.#ended) return;
    this.#goawayLastId = Math.min(this.#goawayLastId, lastStreamId);
    this.#queue(goawayFrame(lastStreamId, code, Buffer.from(debugData)));
  }

  /**
   * Graceful close: GOAWAY naming the last stream accepted (unless one as low went
   * already), no new streams, and the connection ends once the open ones have closed.
   */
  close(): void {
    if (this.#closing || this.#ended) return;
    this.#closing = true;
    if (this.#goawayLastId > this.#lastProcessedId) this.goaway(H2_ERROR.NO_ERROR, this.#lastProcessedId, '');
    if (this.#streams.size === 0) this.#end();
  }

  /** Closes every stream and the connection now, after a GOAWAY `code` when one is given. */
  destroy(code?: number, debugData = ''): void {
    // Already ending: its socket is destroyed soon if the peer does not close it first.
    if (this.#ended) return;
    if (code !== undefined) this.goaway(code, this.#lastProcessedId, debugData);
    this.#end();
  }

  // --- for streams ---

  /** @internal */
  sendHeaders(stream: H2Stream, headers: ResponseFields, endStream: boolean): void {
    if (stream.sendClosed) return;
    this.#activity++;
    const block = encodeHeaderBlock(headers);
    if (!endStream && (stream.sendWindow <= 0 || this.#flow.sendWindow <= 0 || stream.hasQueued)) {
      // No DATA could follow now: the headers wait and go out with the first of it. A
      // client that cancels meanwhile gets nothing, and none gets HEADERS with no DATA
      // behind them (nghttp2 clients have failed whole connections on DATA that came
      // long after HEADERS on a stream they had just cancelled).
      const replaced = stream.holdHeaders(block);
      if (replaced !== undefined) this.#unwait(replaced.length, false);
      this.#wait(block.length);
      if (this.#flow.sendWindow <= 0) this.#blocked.add(stream);
      return;
    }
    if (endStream) return this.#sendEnd(stream, block);
    this.#queueHeaderBlock(stream.id, block, false);
  }

  /** @internal */
  sendData(stream: H2Stream, first: Buffer, second: Buffer | undefined): boolean {
    if (stream.sendData(false) !== undefined) return false;
    this.#activity++;
    const length = first.length + (second === undefined ? 0 : second.length);
    if (!stream.hasQueued && length <= stream.sendWindow && length <= this.#flow.sendWindow && length <= this.#peerMaxFrameSize) {
      this.#releaseHeaders(stream);
      stream.takeSend(length);
      this.#flow.takeSend(length);
      this.#writer.pushFrameHeader(length, FRAME.DATA, 0, stream.id);
      this.#queue(first);
      if (second !== undefined) this.#queue(second);
    } else {
      stream.enqueue(first, second, length);
      this.#wait(length);
      this.#sendQueued(stream);
    }
    if (stream.queuedBytes < STREAM_HIGH_WATER_MARK && !this.#writer.congested) return true;
    stream.oweDrain();
    return false;
  }

  /** @internal */
  sendTrailers(stream: H2Stream, trailers: ResponseFields): void {
    if (stream.sendClosed || stream.hasPendingTrailers) return;
    this.#activity++;
    const block = encodeHeaderBlock(trailers);
    if (stream.hasQueued) {
      stream.holdTrailers(block);
      this.#wait(block.length);
      return;
    }
    this.#releaseHeaders(stream);
    this.#sendEnd(stream, block);
  }

  /** @internal */
  resetStream(stream: H2Stream, code: number): void {
    // §5.1: a closed stream gets no RST_STREAM (nor any frame but PRIORITY).
    if (stream.sendRstStream() !== undefined) return;
    this.#queue(rstStreamFrame(stream.id, code));
    this.#forget(stream);
  }

  /** @internal The stream was resumed: the window it held back goes to the client. */
  returnWindow(stream: H2Stream): void {
    this.#acknowledge(stream);
  }

  /** @internal */
  releaseHeld(stream: H2Stream): void {
    this.#charge(-stream.takeHeld());
  }

  // --- memory ---

  /** Charges `bytes` (negative: releases them) to the connection's ceiling and the process's. */
  #charge(bytes: number): void {
    this.#held += bytes;
    this.#process.held += bytes;
    if (this.#peer !== undefined) this.#peer.held += bytes;
  }

  /**
   * True when `bytes` more would pass a ceiling: the connection's own, its client address's
   * share, or the process's. Past the process's, only a connection that reads (#reads) and
   * holds little (PROCESS_MEMORY_READER_SHARE) may go on, into the reserve above it.
   */
  #overCeiling(bytes: number): boolean {
    if (this.#held + bytes > this.#limits.maxHeldBytes) return true;
    if (this.#peer !== undefined && this.#peer.held + bytes > this.#peerCeiling) return true;
    const processHeld = this.#process.held + bytes;
    if (processHeld <= this.#processCeiling) return false;
    return !this.#reads() || this.#held + bytes > this.#processReaderShare || processHeld > this.#processReaderCeiling;
  }

  /**
   * Whether the connection reads: no answer waits for window, and its open streams, if
   * any, moved (request bytes read, answers written) within READER_PROGRESS_MS. Looked at
   * only past the process's ceiling: the clock is read then, never per frame.
   */
  #reads(): boolean {
    if (this.#waiting > 0) return false;
    if (this.#streams.size === 0) return true;
    const now = performance.now();
    if (this.#activity !== this.#activitySeen) {
      this.#activitySeen = this.#activity;
      this.#activeAt = now;
    }
    return now - this.#activeAt < READER_PROGRESS_MS;
  }

  /** `bytes` of an encoded answer wait for window: charged, and watched by the stall check. */
  #wait(bytes: number): void {
    if (this.#waiting === 0) this.#startStallCheck();
    this.#waiting += bytes;
    this.#charge(bytes);
  }

  /** `bytes` that waited for window are sent (`sent`), or dropped with their stream. */
  #unwait(bytes: number, sent: boolean): void {
    this.#waiting -= bytes;
    this.#charge(-bytes);
    if (sent) this.#progress += bytes;
  }

  /** Arms the stall check (one timer per connection, re-armed, never one per answer). */
  #startStallCheck(): void {
    const bound = this.#limits.maxStallMs;
    if (bound === undefined || this.#ended) return;
    if (this.#stallTimer !== undefined) return;
    this.#progressSeen = this.#progress;
    this.#stalledChecks = 0;
    this.#stallTimer = setTimeout(() => this.#checkStall(), Math.max(1, bound / STALL_CHECKS_PER_BOUND));
    this.#stallTimer.unref();
  }

  /** Answers still waiting, and none of their bytes sent for maxStallMs: the client is not reading; the connection ends. */
  #checkStall(): void {
    const timer = this.#stallTimer as NodeJS.Timeout;
    if (this.#ended || this.#waiting === 0) {
      this.#stallTimer = undefined;
      return;
    }
    if (this.#progress !== this.#progressSeen) {
      this.#progressSeen = this.#progress;
      this.#stalledChecks = 0;
    } else if (++this.#stalledChecks >= STALL_CHECKS_PER_BOUND) {
      this.#stallTimer = undefined;
      this.#connectionError(new ConnectionError(H2_ERROR.ENHANCE_YOUR_CALM, 'answers waited for flow-control window too long'));
      return;
    }
    timer.refresh();
  }

  // --- output ---

  #queue(buffer: Buffer): void {
    this.#writer.push(buffer);
  }

  #onDrain(): void {
    // After a connection error the socket stays paused: the drain only lets the GOAWAY out.
    if (this.#stoppedReading) return;
    this.#writer.drained();
    for (const stream of this.#streams.values()) this.#maybeDrained(stream);
  }

  #maybeDrained(stream: H2Stream): void {
    if (stream.queuedBytes >= STREAM_HIGH_WATER_MARK || this.#writer.congested) return;
    stream.payDrain();
  }

  /** A header block as HEADERS (+ CONTINUATION) frames no larger than the peer's SETTINGS_MAX_FRAME_SIZE. */
  #queueHeaderBlock(streamId: number, block: Buffer, endStream: boolean): void {
    if (this.#tableSizeUpdate) {
      this.#tableSizeUpdate = false;
      this.#tableSizeZero = true;
      block = Buffer.concat([TABLE_SIZE_ZERO, block]);
    }
    this.#writer.pushHeaderBlock(streamId, block, endStream, this.#peerMaxFrameSize);
  }

  /** Sends headers held back for lack of window, ahead of the DATA or trailers now going out. */
  #releaseHeaders(stream: H2Stream): void {
    const held = stream.takeHeldHeaders();
    if (held === undefined) return;
    this.#unwait(held.length, true);
    this.#queueHeaderBlock(stream.id, held, false);
  }

  /** Sends a stream's queued DATA as far as both windows allow, then its trailers once the queue is empty. */
  #sendQueued(stream: H2Stream): void {
    while (stream.hasQueued) {
      const room = Math.min(stream.sendWindow, this.#flow.sendWindow, this.#peerMaxFrameSize);
      if (room <= 0) {
        if (this.#flow.sendWindow <= 0) this.#blocked.add(stream);
        return;
      }
      this.#releaseHeaders(stream);
      const chunk = stream.dequeue(room);
      stream.takeSend(chunk.length);
      this.#flow.takeSend(chunk.length);
      this.#unwait(chunk.length, true);
      this.#writer.pushFrameHeader(chunk.length, FRAME.DATA, 0, stream.id);
      this.#queue(chunk);
    }
    this.#blocked.delete(stream);
    if (stream.sendWindow > 0 && this.#flow.sendWindow > 0) this.#releaseHeaders(stream);
    const trailers = stream.takeTrailers();
    if (trailers !== undefined) {
      this.#unwait(trailers.length, true);
      this.#releaseHeaders(stream);
      this.#sendEnd(stream, trailers);
      return;
    }
    this.#maybeDrained(stream);
  }

  /**
   * Our END_STREAM (trailers, or a Trailers-Only response): §5.1, open -> half-closed
   * (local), half-closed (remote) -> closed. Legal here: the caller found the stream not
   * send-closed, and a stream that closes drops what waited to be sent.
   */
  #sendEnd(stream: H2Stream, block: Buffer): void {
    stream.sendHeaders(true);
    this.#queueHeaderBlock(stream.id, block, true);
    // A client still sending (half-closed (local)) is told to stop with RST_STREAM NO_ERROR
    // (the protocol document (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md)'s
    // early server closure): the call has its status, and what it would send is only read to
    // be dropped. So no stream stays half-closed (local).
    if (stream.closed) this.#forget(stream);
    else this.resetStream(stream, H2_ERROR.NO_ERROR);
  }

  // --- stream lifecycle ---

  /**
   * A stream reached closed (§5.1): the connection lets go of it. What it was charged and
   * what waited to be sent are released, its id is remembered with why it closed, and the
   * call is told. Called after every move that can close a stream; once per stream.
   */
  #forget(stream: H2Stream): void {
    if (!this.#streams.delete(stream.id)) return;
    this.#blocked.delete(stream);
    this.#charge(-stream.releaseCharges());
    const unsent = stream.dropUnsent();
    if (unsent > 0) this.#unwait(unsent, false);
    this.#rememberClosed(stream.id, stream.closeCause as CloseCause);
    stream.announceClosed();
    if (this.#closing && this.#streams.size === 0) this.#end();
  }

  /** A stream the connection ended: closed, and let go of. */
  #abandon(stream: H2Stream): void {
    stream.connectionEnded();
    this.#forget(stream);
  }

  #rememberClosed(streamId: number, cause: CloseCause): void {
    // A stream id closes once: the ring and the map hold the same ids, and the oldest leaves
    // both (no iterator made per stream, as asking the map for its first key would).
    const oldest = this.#closedOrder[this.#closedNext];
    if (oldest !== undefined) this.#recentlyClosed.delete(oldest);
    this.#closedOrder[this.#closedNext] = streamId;
    this.#closedNext = (this.#closedNext + 1) % RECENTLY_CLOSED;
    this.#recentlyClosed.set(streamId, cause);
  }

  /**
   * A stream error (§5.4.2) the client caused: RST_STREAM `code`, the connection lives
   * on. Counted with the client's own resets: a client that makes the server reset
   * streams ("MadeYouReset") cycles streams as fast as one that resets them itself.
   */
  #streamError(stream: H2Stream, code: number): void {
    this.#countReset(code);
    this.resetStream(stream, code);
  }

  /**
   * Charges a reset this side sends to the Rapid Reset guard; one for a frame the client
   * got wrong (not a limit of ours) is a glitch too.
   */
  #countReset(code: number): void {
    if (!this.#resets.take()) throw new ConnectionError(H2_ERROR.ENHANCE_YOUR_CALM, 'too many RST_STREAM frames');
    if (code !== H2_ERROR.ENHANCE_YOUR_CALM && code !== H2_ERROR.REFUSED_STREAM) this.#glitch();
  }

  /** An invalid or useless frame: past the glitch budget the connection ends. */
  #glitch(): void {
    if (!this.#glitches.take()) throw new ConnectionError(H2_ERROR.ENHANCE_YOUR_CALM, 'too many invalid or useless frames');
  }

  /** Ends the connection: every stream closed, queued frames flushed, the socket ended (and destroyed if it lingers). */
  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#pending = undefined;
    clearTimeout(this.#handshakeTimer);
    clearTimeout(this.#stallTimer);
    for (const stream of [...this.#streams.values()]) this.#abandon(stream);
    this.#writer.flush();
    endSocket(this.socket, END_FLUSH_MS);
  }

  /**
   * GOAWAY `code`, then the connection ends without reading another byte: what the
   * client sends after its error is neither parsed nor read (as nghttp2 stops once it
   * has decided on GOAWAY), so a flood behind it costs nothing while the output flushes.
   */
  #connectionError(error: ConnectionError): void {
    if (this.#ended) return;
    if (!this.#settingsSeen) this.#events.handshakeFailed?.(error.code === H2_ERROR.SETTINGS_TIMEOUT ? 'timeout' : 'preface');
    this.goaway(error.code, this.#lastProcessedId, error.message);
    this.#stoppedReading = true;
    this.socket.pause();
    this.#end();
  }

  #handshakeTimedOut(): void {
    this.#handshakeTimer = undefined;
    if (this.#settingsSeen) return;
    this.#connectionError(new ConnectionError(H2_ERROR.SETTINGS_TIMEOUT, 'no preface and SETTINGS in time'));
  }

  #onPeerEnd(): void {
    // The client sends nothing more: calls still waiting for request data cannot finish,
    // nor can answers waiting for window (no WINDOW_UPDATE can come).
    for (const stream of [...this.#streams.values()]) {
      if (!stream.recvClosed || stream.queuedBytes > 0 || stream.hasHeldHeaders || stream.hasPendingTrailers) this.#abandon(stream);
    }
    this.close();
  }

  #onSocketClose(): void {
    this.#destroyed = true;
    this.#ended = true;
    clearTimeout(this.#handshakeTimer);
    clearTimeout(this.#stallTimer);
    this.#writer.discard();
    for (const stream of [...this.#streams.values()]) this.#abandon(stream);
    if (this.#peer !== undefined) this.#limits.peerMemory?.leave(this.#peer);
    this.#pings.failAll();
    this.#events.closed();
  }

  // --- input ---

  #onData(chunk: Buffer): void {
    if (this.#ended) return;
    let buffer = this.#pending === undefined ? chunk : Buffer.concat([this.#pending, chunk]);
    this.#pending = undefined;
    let offset = 0;
    if (!this.#prefaceSeen) {
      const compared = Math.min(buffer.length, CLIENT_PREFACE.length);
      if (buffer.compare(CLIENT_PREFACE, 0, compared, 0, compared) !== 0) {
        this.#connectionError(new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'invalid connection preface'));
        return;
      }
      if (buffer.length < CLIENT_PREFACE.length) {
        this.#pending = buffer;
        return;
      }
      this.#prefaceSeen = true;
      offset = CLIENT_PREFACE.length;
    }
    const f = this.#frame;
    this.#writer.beginBatch();
    try {
      while (!this.#ended && readFrame(buffer, offset, f)) {
        offset = f.end;
        this.#onFrame(buffer, f);
      }
    } catch (err) {
      this.#connectionError(this.#asConnectionError(err));
      this.#writer.endBatch();
      return;
    }
    if (offset < buffer.length && !this.#ended) {
      // Only the unread tail is kept, copied, so the socket's chunk can be collected.
      buffer = buffer.subarray(offset);
      this.#pending = Buffer.from(buffer);
    }
    if (this.#flow.unacknowledged >= CONNECTION_WINDOW / 2 && !this.#ended) this.#queue(windowUpdateFrame(0, this.#flow.acknowledge()));
    if (!this.#ended && this.#writer.overAnswered)
      this.#connectionError(new ConnectionError(H2_ERROR.ENHANCE_YOUR_CALM, 'too many PING or SETTINGS acks unread'));
    this.#writer.endBatch();
  }

  #asConnectionError(err: unknown): ConnectionError {
    if (err instanceof ConnectionError) return err;
    if (err instanceof HpackError) return new ConnectionError(H2_ERROR.COMPRESSION_ERROR, err.message);
    this.#events.internalError(err);
    return new ConnectionError(H2_ERROR.INTERNAL_ERROR, 'internal error');
  }

  /** One whole frame: parse.ts checks its form, the handler what it means here. */
  #onFrame(buffer: Buffer, f: FrameFields): void {
    const type = f.type;
    if (this.#headerBlock.open && type !== FRAME.CONTINUATION) {
      throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'a header block was interrupted by another frame');
    }
    if (!this.#settingsSeen) {
      if (type !== FRAME.SETTINGS || (f.flags & FLAG.ACK) !== 0)
        throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'the first frame must be SETTINGS');
      this.#settingsSeen = true;
      clearTimeout(this.#handshakeTimer);
    }
    switch (type) {
      case FRAME.DATA:
        return this.#onDataFrame(buffer, f);
      case FRAME.HEADERS:
        return this.#onHeadersFrame(buffer, f);
      case FRAME.PRIORITY:
        return this.#onPriorityFrame(buffer, f);
      case FRAME.RST_STREAM:
        return this.#onRstStreamFrame(buffer, f);
      case FRAME.SETTINGS:
        return this.#onSettingsFrame(buffer, f);
      case FRAME.PUSH_PROMISE:
        throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'a client sent PUSH_PROMISE');
      case FRAME.PING:
        return this.#onPingFrame(buffer, f);
      case FRAME.GOAWAY:
        return this.#onGoawayFrame(buffer, f);
      case FRAME.WINDOW_UPDATE:
        return this.#onWindowUpdateFrame(buffer, f);
      case FRAME.CONTINUATION:
        return this.#onContinuationFrame(buffer, f);
      default:
        // §5.5: frames of unknown types are ignored; a gRPC client sends none, so each is a glitch.
        this.#glitch();
    }
  }

  #onDataFrame(buffer: Buffer, f: FrameFields): void {
    const streamId = f.streamId;
    // The whole payload, padding included, counts against flow control (§6.9.1).
    const length = f.end - f.start;
    readData(buffer, f);
    if (!this.#flow.takeReceive(length)) throw new ConnectionError(H2_ERROR.FLOW_CONTROL_ERROR, 'DATA beyond the connection window');
    // The connection's window is always returned: a stream's own window is what holds a client back.
    const endStream = (f.flags & FLAG.END_STREAM) !== 0;
    // Empty DATA, or DATA smaller than a gRPC message's prefix, without END_STREAM: a dribble (CVE-2019-9518).
    if (length < DRIBBLE_BYTES && !endStream) this.#glitch();
    const stream = this.#streams.get(streamId);
    // §5.1, §6.1: DATA only on a stream open on the client's side; END_STREAM half-closes it.
    const verdict = stream === undefined ? this.#withoutStream(streamId, 'DATA') : stream.recvData(endStream);
    if (verdict !== undefined) return this.#refuseFrame(verdict, streamId, stream);
    const live = stream as H2Stream;
    if (!live.takeReceive(length)) return this.#streamError(live, H2_ERROR.FLOW_CONTROL_ERROR);
    const size = f.end - f.start;
    live.received(size);
    this.#charge(size);
    if (size > 0) this.#activity++;
    if (this.#overCeiling(0)) return this.#streamError(live, H2_ERROR.ENHANCE_YOUR_CALM);
    if (size > 0) live.deliver(buffer.subarray(f.start, f.end));
    // Closed (and let go of) while the call took the payload: it reset the stream, or
    // answered it, which closes a stream half-closed (remote) by this END_STREAM (§5.1).
    if (live.closed) return;
    if (endStream) {
      if (!live.contentLengthMet) return this.#streamError(live, H2_ERROR.PROTOCOL_ERROR);
      this.#inputEnded(live);
    } else if (!live.paused && live.unacknowledged >= STREAM_WINDOW / 2) {
      this.#acknowledge(live);
    }
  }

  /** Returns a stream's received bytes to the client's window. */
  #acknowledge(stream: H2Stream): void {
    if (stream.unacknowledged === 0 || stream.recvClosed) return;
    this.#queue(windowUpdateFrame(stream.id, stream.acknowledge()));
  }

  /**
   * The client's END_STREAM was taken (the stream moved on it to half-closed (remote),
   * §5.1): the call is told. It never closes a stream: none stays half-closed (local) (#sendEnd).
   */
  #inputEnded(stream: H2Stream): void {
    this.#activity++;
    this.releaseHeld(stream);
    stream.announceInputEnd();
  }

  #onHeadersFrame(buffer: Buffer, f: FrameFields): void {
    const selfDependent = readHeaders(buffer, f);
    const { streamId, flags, start, end } = f;
    if (flags & FLAG.END_HEADERS) {
      this.#headerBlockDone(streamId, flags, buffer.subarray(start, end), selfDependent);
      return;
    }
    // An empty fragment that does not end the block only makes the server wait (CVE-2019-9518).
    if (end === start) this.#glitch();
    this.#headerBlock.start(streamId, flags, buffer.subarray(start, end), selfDependent);
  }

  #onContinuationFrame(buffer: Buffer, f: FrameFields): void {
    const assembler = this.#headerBlock;
    const block = assembler.continue(f.streamId, buffer.subarray(f.start, f.end), (f.flags & FLAG.END_HEADERS) !== 0);
    if (block !== undefined) this.#headerBlockDone(f.streamId, assembler.flags, block, assembler.selfDependent);
  }

  #headerBlockDone(streamId: number, flags: number, block: Buffer, selfDependent: boolean): void {
    const fields: string[] = [];
    const maxList = this.#limits.maxHeaderListBytes;
    // Always decoded, so HPACK's dynamic table stays in step with the client's.
    const listSize = this.#hpack.decode(block, 0, block.length, fields, maxList);
    if (streamId % 2 === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, `client stream id ${streamId} is even`);
    const endStream = (flags & FLAG.END_STREAM) !== 0;
    const stream = this.#streams.get(streamId);
    if (stream !== undefined) {
      // Trailers (§8.1): END_STREAM (stream.ts), well-formed regular fields only, and the
      // DATA the request's content-length announced (§8.1.1).
      const verdict = stream.recvHeaders(endStream);
      if (verdict !== undefined) return this.#refuseFrame(verdict, streamId, stream);
      if (listSize > maxList || !validTrailerFields(fields, this.#hpack.wellFormed) || !stream.contentLengthMet) {
        return this.#streamError(stream, H2_ERROR.PROTOCOL_ERROR);
      }
      return this.#inputEnded(stream);
    }
    if (streamId <= this.#lastStreamId) {
      // §6.8: a stream above the GOAWAY's last id was ignored, never opened: so are its frames.
      if (streamId > this.#goawayLastId) return;
      return this.#refuseFrame(recvOnClosed('HEADERS', this.#recentlyClosed.get(streamId)), streamId);
    }
    this.#lastStreamId = streamId;
    // §6.8: after GOAWAY, new streams are ignored; the client retries them elsewhere.
    if (streamId > this.#goawayLastId || this.#closing) return;
    if (selfDependent) return this.#refuse(streamId, H2_ERROR.PROTOCOL_ERROR);
    if (listSize > maxList) return this.#refuse(streamId, H2_ERROR.ENHANCE_YOUR_CALM);
    const cost = STREAM_COST_BYTES + listSize;
    if (this.#streams.size >= this.#limits.maxConcurrentStreams || this.#overCeiling(cost)) {
      return this.#refuse(streamId, H2_ERROR.REFUSED_STREAM);
    }
    const headers = validateRequestFields(fields, this.#hpack.wellFormed);
    const contentLength = headers?.['content-length'];
    // Refused before the stream is charged, so a refusal holds nothing (§8.1.1).
    if (headers === undefined || (contentLength !== undefined && !/^\d{1,15}$/.test(contentLength))) {
      return this.#refuse(streamId, H2_ERROR.PROTOCOL_ERROR);
    }
    const announced = contentLength === undefined ? -1 : Number(contentLength);
    const created = new H2Stream(this, streamId, this.#peerInitialWindow, STREAM_WINDOW, cost, announced);
    // §5.1: idle -> open, or half-closed (remote) with END_STREAM; legal on an idle stream.
    created.recvHeaders(endStream);
    this.#charge(cost);
    this.#streams.set(streamId, created);
    this.#lastProcessedId = streamId;
    if (endStream && !created.contentLengthMet) return this.#streamError(created, H2_ERROR.PROTOCOL_ERROR);
    this.#events.stream(created, headers, fields);
    if (endStream && !created.closed) created.announceInputEnd();
  }

  /**
   * §5.1: a stream the client has not opened yet (above the last id it used), or an even
   * one, which only this server could open and never does.
   */
  #isIdle(streamId: number): boolean {
    return streamId > this.#lastStreamId || streamId % 2 === 0;
  }

  /** §5.1: what `frame` means on a stream the connection holds no H2Stream for, idle or closed (stream.ts). */
  #withoutStream(streamId: number, frame: Exclude<StateFrame, 'HEADERS'>): Verdict {
    return this.#isIdle(streamId) ? recvOnIdle(frame) : recvOnClosed(frame, this.#recentlyClosed.get(streamId));
  }

  /**
   * Acts on what stream.ts answered a frame: nothing when it was legal, else the frame is
   * dropped, or RST_STREAM (§5.4.2, on a stream with or without its object), or GOAWAY (§5.4.1).
   */
  #refuseFrame(verdict: Verdict, streamId: number, stream?: H2Stream): void {
    if (verdict === undefined || verdict === IGNORE) return;
    if (verdict.scope === 'connection') throw new ConnectionError(verdict.code, `${verdict.reason}: stream ${streamId}`);
    if (stream !== undefined) return this.#streamError(stream, verdict.code);
    this.#countReset(verdict.code);
    this.#queue(rstStreamFrame(streamId, verdict.code));
  }

  /** A stream refused before it opened: RST_STREAM and nothing else (§5.4.2), counted as #streamError's are. */
  #refuse(streamId: number, code: number): void {
    this.#countReset(code);
    if (code === H2_ERROR.REFUSED_STREAM && !this.#refusals.take())
      throw new ConnectionError(H2_ERROR.ENHANCE_YOUR_CALM, 'too many refused streams');
    this.#queue(rstStreamFrame(streamId, code));
    this.#rememberClosed(streamId, 'reset-sent');
  }

  #onPriorityFrame(buffer: Buffer, f: FrameFields): void {
    // Priorities are advice this server does not take (RFC 9113 §5.3.2), so each PRIORITY is a glitch (CVE-2019-9513).
    const code = readPriority(buffer, f);
    this.#glitch();
    if (code === 0) return;
    const stream = this.#streams.get(f.streamId);
    if (stream !== undefined) this.#streamError(stream, code);
    else this.#refuse(f.streamId, code);
  }

  #onRstStreamFrame(buffer: Buffer, f: FrameFields): void {
    readRstStream(buffer, f);
    const streamId = f.streamId;
    const stream = this.#streams.get(streamId);
    // §6.4: on an idle stream, a connection error; on a closed one, dropped (§5.4.2: never answered).
    if (stream === undefined) this.#refuseFrame(this.#withoutStream(streamId, 'RST_STREAM'), streamId);
    if (!this.#resets.take()) throw new ConnectionError(H2_ERROR.ENHANCE_YOUR_CALM, 'too many RST_STREAM frames');
    if (stream !== undefined && stream.recvRstStream() === undefined) this.#forget(stream);
  }

  #onSettingsFrame(buffer: Buffer, f: FrameFields): void {
    const values = this.#settings;
    if (!readSettings(buffer, f, values)) return;
    // Responses use no dynamic table; a peer that shrinks its table still expects to hear so (RFC 7541 §4.2).
    if (values.headerTableSize >= 0 && values.headerTableSize < 4096 && !this.#tableSizeZero) this.#tableSizeUpdate = true;
    if (values.maxFrameSize >= 0) this.#peerMaxFrameSize = values.maxFrameSize;
    const grown = values.initialWindowSize >= 0 && this.#setPeerInitialWindow(values.initialWindowSize);
    // The ack first, then the DATA the larger windows let out: the peer applied its SETTINGS
    // from the ack on (§6.5.3), and some (h2spec 6.9.2) read the frames in that order.
    this.#answer(SETTINGS_ACK);
    if (grown) for (const stream of [...this.#streams.values()]) if (stream.hasQueued) this.#sendQueued(stream);
  }

  /** §6.9.2: a new SETTINGS_INITIAL_WINDOW_SIZE moves every open stream's window by the difference; true when they grew. */
  #setPeerInitialWindow(value: number): boolean {
    const delta = value - this.#peerInitialWindow;
    this.#peerInitialWindow = value;
    if (delta === 0) return false;
    for (const stream of this.#streams.values()) {
      if (!stream.addSend(delta)) throw new ConnectionError(H2_ERROR.FLOW_CONTROL_ERROR, 'a stream window above 2^31 - 1');
    }
    return delta > 0;
  }

  #onPingFrame(buffer: Buffer, f: FrameFields): void {
    readPing(f);
    const payload = buffer.subarray(f.start, f.end);
    if (f.flags & FLAG.ACK) {
      // An ack of no ping of ours is ignored (§6.7 only says not to answer it), and is a glitch.
      if (!this.#pings.acked(payload)) this.#glitch();
      return;
    }
    this.#answer(frame(FRAME.PING, FLAG.ACK, 0, payload));
    this.#events.ping();
  }

  /** Queues an ack the peer's frame asked for: the writer counts them (MAX_QUEUED_CONTROL_ANSWERS). */
  #answer(ack: Buffer): void {
    this.#writer.pushAnswer(ack);
  }

  #onGoawayFrame(buffer: Buffer, f: FrameFields): void {
    const code = readGoaway(buffer, f);
    this.#events.goaway();
    // As node:http2 does: a client leaving without error lets its calls finish.
    if (code === H2_ERROR.NO_ERROR) this.close();
    else this.#end();
  }

  #onWindowUpdateFrame(buffer: Buffer, f: FrameFields): void {
    const increment = readWindowUpdate(buffer, f);
    const streamId = f.streamId;
    if (streamId === 0) {
      if (increment === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'WINDOW_UPDATE of 0');
      if (!this.#flow.addSend(increment)) throw new ConnectionError(H2_ERROR.FLOW_CONTROL_ERROR, 'connection window above 2^31 - 1');
      for (const stream of this.#blocked) {
        if (this.#flow.sendWindow <= 0) break;
        this.#sendQueued(stream);
      }
      return;
    }
    const stream = this.#streams.get(streamId);
    if (stream === undefined) {
      // §5.1: on an idle stream, a connection error. On a stream that just closed, a race
      // any client meets (its window update crossed our END_STREAM): dropped. On one closed
      // long ago (RECENTLY_CLOSED streams back), a frame that does nothing: a glitch.
      this.#refuseFrame(this.#withoutStream(streamId, 'WINDOW_UPDATE'), streamId);
      if (!this.#recentlyClosed.has(streamId)) this.#glitch();
      return;
    }
    if (increment === 0) return this.#streamError(stream, H2_ERROR.PROTOCOL_ERROR);
    if (!stream.addSend(increment)) return this.#streamError(stream, H2_ERROR.FLOW_CONTROL_ERROR);
    if (stream.hasQueued || stream.hasPendingTrailers || stream.hasHeldHeaders) this.#sendQueued(stream);
  }
}
