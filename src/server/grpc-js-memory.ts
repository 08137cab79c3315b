/**
 * The memory guards of jwt-grpc's own transport (src/transport/http2/wire/connection.ts),
 * as near as a @grpc/grpc-js server allows: grpc-js hands HTTP/2 to node:http2 (nghttp2),
 * so the framing is not ours. What is bounded, and how (docs/http2-limits.md):
 *
 * - Per connection: each open stream is charged GRPC_JS_STREAM_COST_BYTES and its header
 *   list (as the own transport charges it: RFC 7541 §4.1 sizes, so headers that HPACK
 *   sends as a few indexed bytes count what they take decoded); past
 *   `maxConnectionMemoryMb` new streams are refused (REFUSED_STREAM). node:http2's own
 *   `maxSessionMemory` (grpc-js's `grpc-node.max_session_memory`, which grpc-js leaves
 *   unlimited) is set to the same ceiling: it counts the native side, data queued to
 *   send included, and refuses new streams past it.
 * - Process-wide: the same charges go to the process's count (PROCESS_MEMORY), shared
 *   with the own transport; past `maxProcessStreamMemoryMb` new streams are refused on a
 *   connection whose answers wait, or whose open calls made no progress (none finished)
 *   for READER_PROGRESS_MS, and on every connection past the reader reserve.
 * - Per client address: the same charges go to its count (PEER_MEMORY), shared with the
 *   own transport; past its share (`peerSharePercent` of the process's ceiling) its new
 *   streams are refused, whichever of its connections they come on.
 * - Stall: every `maxFlowControlStallMs` / STALL_CHECKS_PER_BOUND each connection's open
 *   streams are looked at (`bufferSize`: answer bytes written and not yet sent); when
 *   answers wait and none of their writes completed for the whole bound, the connection
 *   ends (GOAWAY ENHANCE_YOUR_CALM, then destroy). node:http2 completes a write once all
 *   of it is sent, so an answer trickling out counts as moving only when one whole
 *   message is out: a single answer larger than what its client reads in the bound is
 *   closed as stalled (a token service's answers are a few KB). The answer bytes found
 *   waiting are charged too, as of the last check.
 * - A client refused more than the refused-stream budget allows (REFUSED_STREAM_BURST) is
 *   sent GOAWAY ENHANCE_YOUR_CALM, as on the own transport.
 *
 * A call costs this guard an integer add and a Set entry; the stall check runs on a timer.
 */
import { Buffer } from 'node:buffer';
import type { Http2Server, Http2Session, IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import type { Server } from '@grpc/grpc-js';
import { performance } from 'node:perf_hooks';
import { Budget, type MemoryLedger, type PeerLedger, type PeerLedgers } from '../transport/http2/wire/budget.js';
import {
  PROCESS_MEMORY_READER_RESERVE,
  PROCESS_MEMORY_READER_SHARE,
  READER_PROGRESS_MS,
  REFUSED_STREAM_BURST,
  REFUSED_STREAM_RATE,
  STALL_CHECKS_PER_BOUND,
} from '../transport/http2/wire/limits.js';
import { PEER_MEMORY, PROCESS_MEMORY } from '../transport/http2/wire/process-memory.js';
import { nodeHttp2 } from '../base/optional-deps.js';
import { peerKey } from '../base/connection-guard.js';
import { JwtGrpcError } from '../base/errors.js';

/**
 * What an open grpc-js call is charged: its objects on both sides of node:http2 (the
 * Http2Stream, grpc-js's call, its metadata and interceptors). Measured as the own
 * transport's (bench/zero-window/memory.ts --transport grpc-js, 20,000 unary calls held
 * by a client that grants no window): ~6.6 KB of V8 heap each after a full GC, ~15 KB of
 * RSS. Charged 16 KiB: at the default 64 MiB a connection still holds 4,096 calls.
 */
export const GRPC_JS_STREAM_COST_BYTES = 16 << 10;

/** The ceilings, in bytes and milliseconds, as the table's options give them. */
export interface GrpcJsMemoryLimits {
  readonly maxConnectionBytes: number;
  readonly maxProcessBytes: number;
  /** What one client address may hold over all its connections; absent: no share. */
  readonly maxPeerBytes?: number;
  readonly maxStallMs: number;
}

/** The process's counts a guard charges: the whole, and per client address. */
interface Ledgers {
  readonly process: MemoryLedger;
  readonly peers: PeerLedgers;
}

const GUARD = Symbol('jwt-grpc memory guard');
const COST = Symbol('jwt-grpc memory charge');
type GuardedStream = ServerHttp2Stream & { [GUARD]?: SessionGuard; [COST]?: number };

/** What a stream is charged: GRPC_JS_STREAM_COST_BYTES and its header list's size, as RFC 7541 §4.1 counts it (node:http2's raw list: name, value, ...). */
function streamCost(rawHeaders: readonly string[]): number {
  let size = GRPC_JS_STREAM_COST_BYTES;
  for (let i = 0; i < rawHeaders.length; i++) size += (rawHeaders[i] as string).length;
  return size + (rawHeaders.length >> 1) * 32;
}

/** One connection's charges and its stall check. */
class SessionGuard {
  readonly #session: Http2Session;
  readonly #limits: GrpcJsMemoryLimits;
  readonly #process: MemoryLedger;
  readonly #peers: PeerLedgers;
  /** What the connection's client address holds over all its connections. */
  readonly #peer: PeerLedger;
  /** Calls finished, and how many when a look last saw the count move (#reads). */
  #finished = 0;
  #finishedSeen = 0;
  #activeAt = performance.now();
  readonly streams = new Set<GuardedStream>();
  readonly #refusals = new Budget(REFUSED_STREAM_BURST, REFUSED_STREAM_RATE);
  /** Bytes charged: streams, and the answer bytes found waiting at the last check. */
  held = 0;
  #waiting = 0;
  /** Each stream's waiting bytes at the last check, to see whether any moved. */
  readonly #lastSeen = new Map<GuardedStream, number>();
  #stalledChecks = 0;
  readonly #timer: NodeJS.Timeout;

  constructor(session: Http2Session, limits: GrpcJsMemoryLimits, ledgers: Ledgers) {
    this.#session = session;
    this.#limits = limits;
    this.#process = ledgers.process;
    this.#peers = ledgers.peers;
    this.#peer = ledgers.peers.join(peerKey(session.socket?.remoteAddress));
    this.#timer = setInterval(() => this.#check(), Math.max(1, limits.maxStallMs / STALL_CHECKS_PER_BOUND)).unref();
    session.once('close', () => this.#closed());
  }

  /** Charges a new stream `cost` bytes, or refuses it (false) past a ceiling. */
  admit(stream: GuardedStream, cost: number): boolean {
    if (this.#overCeiling(cost)) {
      if (!this.#refusals.take()) {
        this.#session.goaway(nodeHttp2().constants.NGHTTP2_ENHANCE_YOUR_CALM);
        this.#session.destroy();
        return false;
      }
      // A stream closed with an error code emits 'error': nobody else listens to this one.
      stream.on('error', ignore);
      stream.close(nodeHttp2().constants.NGHTTP2_REFUSED_STREAM);
      return false;
    }
    this.#charge(cost);
    this.streams.add(stream);
    stream[GUARD] = this;
    stream[COST] = cost;
    stream.on('close', onStreamClose);
    return true;
  }

  /** `answered`: the stream closed without error, its answer all out (a stream the client reset is no progress). */
  release(stream: GuardedStream, answered = false): void {
    if (!this.streams.delete(stream)) return;
    if (answered) this.#finished++;
    this.#charge(-(stream[COST] as number));
  }

  #charge(bytes: number): void {
    this.held += bytes;
    this.#process.held += bytes;
    this.#peer.held += bytes;
  }

  /** As the own transport's: the connection's ceiling, its address's share, then the process's, with the reserve for connections that read. */
  #overCeiling(bytes: number): boolean {
    if (this.held + bytes > this.#limits.maxConnectionBytes) return true;
    if (this.#peer.held + bytes > (this.#limits.maxPeerBytes ?? Number.POSITIVE_INFINITY)) return true;
    const processHeld = this.#process.held + bytes;
    const ceiling = this.#limits.maxProcessBytes;
    if (processHeld <= ceiling) return false;
    return (
      !this.#reads() ||
      this.held + bytes > ceiling * PROCESS_MEMORY_READER_SHARE ||
      processHeld > ceiling * (1 + PROCESS_MEMORY_READER_RESERVE)
    );
  }

  /**
   * As the own transport's: no answer found waiting, and the open calls, if any, moved
   * within READER_PROGRESS_MS. node:http2 shows neither a stream's request bytes nor its
   * answer's until it is all out (the connection's bytes read count the HEADERS of the very
   * stream asked about, and its PINGs), so moving is a call answered on the connection.
   */
  #reads(): boolean {
    if (this.#waiting > 0) return false;
    if (this.streams.size === 0) return true;
    const now = performance.now();
    if (this.#finished !== this.#finishedSeen) {
      this.#finishedSeen = this.#finished;
      this.#activeAt = now;
    }
    return now - this.#activeAt < READER_PROGRESS_MS;
  }

  /**
   * Re-charges the answer bytes waiting, and ends the connection once answers have waited
   * the whole bound with none of their writes completed. A write completed: a stream's
   * buffered bytes fell, or it closed without error (its answer all out); new answers
   * waiting, or streams the client reset, are no progress.
   */
  #check(): void {
    const lastSeen = this.#lastSeen;
    let moved = false;
    for (const [stream, before] of lastSeen) {
      if (stream.bufferSize < before && (!stream.closed || stream.rstCode === nodeHttp2().constants.NGHTTP2_NO_ERROR)) moved = true;
    }
    lastSeen.clear();
    let waiting = 0;
    for (const stream of this.streams) {
      const buffered = stream.bufferSize;
      if (buffered === 0) continue;
      waiting += buffered;
      lastSeen.set(stream, buffered);
    }
    const startedWaiting = this.#waiting === 0;
    this.#charge(waiting - this.#waiting);
    this.#waiting = waiting;
    if (waiting === 0 || moved || startedWaiting) {
      this.#stalledChecks = 0;
      return;
    }
    if (++this.#stalledChecks < STALL_CHECKS_PER_BOUND) return;
    this.#session.goaway(
      nodeHttp2().constants.NGHTTP2_ENHANCE_YOUR_CALM,
      0,
      Buffer.from('answers waited for flow-control window too long'),
    );
    this.#session.destroy();
  }

  #closed(): void {
    clearInterval(this.#timer);
    for (const stream of this.streams) this.release(stream);
    this.#charge(-this.#waiting);
    this.#waiting = 0;
    this.#lastSeen.clear();
    this.#peers.leave(this.#peer);
  }
}

function ignore(): void {}

function onStreamClose(this: GuardedStream): void {
  this[GUARD]?.release(this, this.rstCode === nodeHttp2().constants.NGHTTP2_NO_ERROR);
}

/**
 * Puts the guards on every node:http2 server `server` creates from now on (call it before
 * `bindAsync`): grpc-js builds one per bound address in its (private) `createHttp2Server`,
 * and its 'stream' listener runs only for streams the guard admits. Returns false,
 * changing nothing, on a grpc-js without that method. A node:http2 server made without
 * grpc-js's 'stream' listener in place throws ERR_GRPC_JS_VERSION, so the bind fails.
 *
 * @example
 * ```ts
 * const server = new (grpcJs().Server)(serverChannelOptions(options));
 * if (!guardGrpcJsMemory(server, { maxConnectionBytes: 64 << 20, maxProcessBytes: 256 << 20, maxStallMs: 30_000 })) logger.warn('...');
 * ```
 * @internal
 */
export function guardGrpcJsMemory(
  server: Server,
  limits: GrpcJsMemoryLimits,
  process: MemoryLedger = PROCESS_MEMORY,
  peers: PeerLedgers = PEER_MEMORY,
): boolean {
  const internal = server as unknown as { createHttp2Server?: (...args: unknown[]) => Http2Server };
  const create = internal.createHttp2Server;
  if (typeof create !== 'function') return false;
  internal.createHttp2Server = function (this: unknown, ...args: unknown[]): Http2Server {
    const http2Server = create.apply(this, args);
    guardHttp2Server(http2Server, limits, { process, peers });
    return http2Server;
  };
  return true;
}

type StreamListener = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, rawHeaders: string[]) => void;

function guardHttp2Server(http2Server: Http2Server, limits: GrpcJsMemoryLimits, ledgers: Ledgers): void {
  const guards = new WeakMap<Http2Session, SessionGuard>();
  http2Server.on('session', (session: Http2Session) => guards.set(session, new SessionGuard(session, limits, ledgers)));
  // grpc-js's own listeners, set up before createHttp2Server returns: they see only admitted streams.
  const listeners = http2Server.listeners('stream') as StreamListener[];
  // None yet: this grpc-js adds its listener later, where it would serve every stream unguarded.
  if (listeners.length === 0) {
    throw new JwtGrpcError(
      'ERR_GRPC_JS_VERSION',
      "transport 'grpc-js': this @grpc/grpc-js adds its 'stream' listener after createHttp2Server, out of the memory guard's reach; " +
        "use transport 'http2', or a @grpc/grpc-js this jwt-grpc supports (docs/security.md)",
      { field: 'transport' },
    );
  }
  http2Server.removeAllListeners('stream');
  http2Server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, rawHeaders: string[]) => {
    const guard = guards.get(stream.session as Http2Session);
    if (guard !== undefined && !guard.admit(stream, streamCost(rawHeaders))) return;
    for (let i = 0; i < listeners.length; i++) (listeners[i] as StreamListener).call(http2Server, stream, headers, flags, rawHeaders);
  });
}
