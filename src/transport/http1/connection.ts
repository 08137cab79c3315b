/**
 * One HTTP/1.1 connection on the gRPC port: what node:http does not bound for it. Its first
 * request head must arrive within what is left of the port's handshake deadline (node:http's
 * `headersTimeout` counts from when it was handed the socket, after the sniff or TLS); it
 * is closed after a request past its age (the HTTP/2 connection's `maxConnectionAgeMs`);
 * it holds at most HTTP1_MAX_PIPELINED_REQUESTS requests unanswered (pipelined); and answers it
 * does not read may wait at most `maxFlowControlStallMs`. One timer at a time per
 * connection, never one per request.
 */
import type { Socket } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ConnectionGuard, peerKey } from '../../base/connection-guard.js';
import { DEADLINE_CHECKS_PER_BOUND, type PeerDeadlineReport } from '../../base/peer-deadlines.js';
import { MAX_CONNECTION_AGE_JITTER } from '../http2/defaults.js';
import type { ConnectionLimits } from '../http2/wire/connection.js';
import type { MemoryLedger, PeerLedger } from '../http2/wire/budget.js';
import { STREAM_COST_BYTES } from '../http2/wire/limits.js';

/** The bounds of a port's HTTP/1.1 connections, from the server's resolved options. */
export interface Http1ConnectionLimits {
  /** Requests a connection may have unanswered (pipelined): HTTP1_MAX_PIPELINED_REQUESTS, or `maxConcurrentStreams` when lower. */
  readonly maxInFlight: number;
  /** `maxConnectionAgeMs`, jittered per connection as on HTTP/2 (gRFC A9). */
  readonly maxAgeMs: number;
  /** `maxFlowControlStallMs`: how long answers may wait on a client that reads none of them. */
  readonly maxStallMs: number;
  readonly guard: ConnectionGuard;
  readonly report: PeerDeadlineReport;
  /** The HTTP/2 connections' memory ceilings: the connection's, its address's share, the process's (the same ledgers). */
  readonly memory: ConnectionLimits;
}

/** RFC 7541 §4.1's size of a header list, as the HTTP/2 connection charges it: each field's name and value, and 32 (16 with each of the two). */
function headSize(request: IncomingMessage): number {
  let size = 0;
  for (const field of request.rawHeaders) size += field.length + 16;
  return size;
}

/** node:http's answer to a head that missed its deadline, as it writes it itself (src/connection-guard.ts). */
const REQUEST_TIMEOUT_ANSWER = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';

function onHeadDeadline(connection: Http1Connection): void {
  connection.headMissed();
}
function onStallCheck(connection: Http1Connection): void {
  connection.checkStall();
}

/** The state of one HTTP/1.1 connection; `closing` makes every later answer end it. @internal */
export class Http1Connection {
  readonly socket: Socket;
  readonly #limits: Http1ConnectionLimits;
  readonly #openedAt = Date.now();
  readonly #ageMs: number;
  /** Request heads received: none yet means the handshake (the first head) is not done. */
  #heads = 0;
  #inFlight = 0;
  #aged = false;
  #closing = false;
  #headTimer: NodeJS.Timeout | undefined;
  #stallTimer: NodeJS.Timeout | undefined = undefined;
  #stalledChecks = 0;
  #lastWaiting = 0;
  #drained = false;
  /** What the connection's requests hold (STREAM_COST_BYTES, the head, the body read), charged to the process and the address too. */
  #held = 0;
  readonly #process: MemoryLedger | undefined;
  readonly #peer: PeerLedger | undefined;

  constructor(socket: Socket, limits: Http1ConnectionLimits) {
    this.socket = socket;
    this.#limits = limits;
    this.#process = limits.memory.processMemory;
    this.#peer = limits.memory.peerMemory?.join(peerKey(socket.remoteAddress));
    const jitter = 1 + (Math.random() * 2 - 1) * MAX_CONNECTION_AGE_JITTER;
    this.#ageMs = Math.round(limits.maxAgeMs * jitter);
    this.#headTimer = setTimeout(onHeadDeadline, limits.guard.remainingMs(socket), this).unref();
    socket.on('drain', () => {
      this.#drained = true;
    });
    socket.once('close', () => {
      clearTimeout(this.#headTimer);
      clearTimeout(this.#stallTimer);
      if (this.#peer !== undefined) limits.memory.peerMemory?.leave(this.#peer);
    });
  }

  /** True once a request head has arrived: past the handshake. */
  get started(): boolean {
    return this.#heads > 0;
  }

  /**
   * A request head arrived and `response` will answer it: `started` when it may go on,
   * `refused` when it was answered 503 at once (a memory ceiling is reached: the HTTP/2
   * connection's REFUSED_STREAM), `closed` when the connection was closed for it (more
   * requests unanswered than `maxInFlight`: a client that pipelines and does not read, or floods).
   */
  requestStarted(request: IncomingMessage, response: ServerResponse): 'started' | 'refused' | 'closed' {
    this.#heads += 1;
    clearTimeout(this.#headTimer);
    this.#headTimer = undefined;
    if (this.#inFlight >= this.#limits.maxInFlight) {
      this.socket.destroy();
      return 'closed';
    }
    this.#inFlight += 1;
    const cost = STREAM_COST_BYTES + headSize(request);
    const admitted = !this.#overCeiling(cost);
    if (admitted) this.charge(cost);
    // 'close' comes once: `on` spares the wrapper `once` builds per request.
    response.on('close', () => {
      this.#inFlight -= 1;
      if (admitted) this.charge(-cost);
      if (this.#closing && this.#inFlight === 0) this.socket.end(() => this.socket.destroy());
    });
    if (!this.#aged && Date.now() - this.#openedAt >= this.#ageMs) {
      this.#aged = true;
      this.#limits.report.connectionClosed('age', 'http/1.1');
    }
    if (this.#aged || this.#closing) response.setHeader('connection', 'close');
    this.#armStallCheck();
    return admitted ? 'started' : 'refused';
  }

  /** Charges `bytes` (negative: releases them) to the connection, its address and the process, as the HTTP/2 connection does. */
  charge(bytes: number): void {
    this.#held += bytes;
    if (this.#process !== undefined) this.#process.held += bytes;
    if (this.#peer !== undefined) this.#peer.held += bytes;
  }

  /** True when `bytes` more would pass the connection's ceiling, its address's share or the process's. */
  #overCeiling(bytes: number): boolean {
    const memory = this.#limits.memory;
    if (this.#held + bytes > memory.maxHeldBytes) return true;
    if (this.#peer !== undefined && this.#peer.held + bytes > (memory.maxPeerHeldBytes ?? Number.POSITIVE_INFINITY)) return true;
    return this.#process !== undefined && this.#process.held + bytes > (memory.maxProcessHeldBytes ?? Number.POSITIVE_INFINITY);
  }

  /** The server is closing: an idle connection ends now, a busy one after its answers (each says `connection: close`). */
  close(): void {
    this.#closing = true;
    if (this.#inFlight === 0) this.socket.destroy();
  }

  /** The first head did not arrive in time: counted as a failed handshake, answered 408 and closed. */
  headMissed(): void {
    this.#headTimer = undefined;
    if (this.#heads > 0 || this.socket.destroyed) return;
    this.#limits.guard.failed('timeout');
    if (this.socket.writable && this.socket.bytesWritten === 0) this.socket.write(REQUEST_TIMEOUT_ANSWER);
    this.socket.destroy();
  }

  #armStallCheck(): void {
    if (this.#stallTimer !== undefined) return;
    this.#stalledChecks = 0;
    this.#stallTimer = setTimeout(onStallCheck, this.#limits.maxStallMs / DEADLINE_CHECKS_PER_BOUND, this).unref();
  }

  /**
   * The stall bound: answers wait in the socket (node:http stops parsing new requests while
   * they do) and none of them moved, no drain and the queue no shorter, for the whole bound
   * (at most a quarter more): the client reads nothing, and the connection is closed.
   */
  checkStall(): void {
    const waiting = this.socket.writableLength;
    const moved = this.#drained || waiting < this.#lastWaiting;
    this.#drained = false;
    this.#lastWaiting = waiting;
    this.#stalledChecks = waiting > 0 && !moved ? this.#stalledChecks + 1 : 0;
    if (this.#stalledChecks >= DEADLINE_CHECKS_PER_BOUND) {
      this.socket.destroy();
      return;
    }
    if (this.#inFlight === 0 && waiting === 0) this.#stallTimer = undefined;
    else (this.#stallTimer as NodeJS.Timeout).refresh();
  }
}
