/**
 * Nothing held before authentication: every listening port of a server (gRPC on either
 * transport, metrics, discovery) closes a connection that has not finished its handshake
 * (TLS, then the HTTP/2 preface and first SETTINGS, or an HTTP/1.1 request head) within one
 * deadline, the option `handshakeTimeoutMs`, and refuses connections past a cap at once,
 * before any TLS work, and those of a client address that holds its share of the cap
 * already (`peerSharePercent`), so that one address cannot take the port from the others.
 * At the cap, a new connection first takes the place of one that holds nothing: the oldest
 * that never carried a request (a silent socket, a handshake never used), else the one idle
 * the longest, so that addresses by the thousand holding idle connections cannot keep a
 * new caller out either. Failed handshakes, refusals and evictions are counted (when metrics are on) and
 * logged at most once per {@link LOG_INTERVAL_MS} with their counts, so a flood of them
 * writes a line every 10 s, never a line per connection, and never what a peer sent.
 */
import { readFileSync } from 'node:fs';
import type { Server as NetServer, Socket } from 'node:net';
import type { Logger } from './log.js';

/** Which listening port a count or log line is about: the `port` label of the metrics. */
export type PortRole = 'grpc' | 'metrics' | 'discovery';

/**
 * Why a handshake failed: `timeout` (the deadline passed), `tls` (the TLS handshake failed,
 * or ALPN chose no protocol the port serves), `preface` (no valid HTTP/2 preface and SETTINGS, nor an HTTP/1.1 request where the port serves one).
 */
export type HandshakeFailure = 'timeout' | 'tls' | 'preface';

/**
 * Why a connection was refused as it was accepted: `cap` (the port's open connections are at
 * its cap), `peer_share` (its client's address holds its share of the cap already),
 * `peer_rate` (its client's address spent its burst of new connections, refilled at {@link PEER_ACCEPT_RATE} a second).
 */
export type RefusalReason = 'cap' | 'peer_share' | 'peer_rate';

/**
 * Why a connection was closed to make room at the cap: `unused` (it never carried a request:
 * a silent socket, or a handshake with no request after it), `idle` (no request in flight;
 * idle the longest of those).
 */
export type EvictionReason = 'unused' | 'idle';

/** Where a guard counts; the server's metrics implement it (src/metrics/connections.ts). */
export interface ConnectionCounters {
  handshakeFailed(port: PortRole, reason: HandshakeFailure): void;
  refused(port: PortRole, reason: RefusalReason): void;
  evicted(port: PortRole, reason: EvictionReason): void;
}

/** The socket node:net accepted: a TLSSocket is traced to it through `_parent`, node:tls's link to the socket it wraps. */
function acceptedSocket(socket: Socket): Socket {
  return (socket as Socket & { _parent?: Socket })._parent ?? socket;
}

/** At most one warning line per kind (failed handshakes, refused connections) per port in this long. */
export const LOG_INTERVAL_MS = 10_000;
/** `maxConnections` when the open-files limit cannot be read (not Linux, or unlimited). */
export const FALLBACK_MAX_CONNECTIONS = 10_000;
/**
 * Descriptors the gRPC cap leaves to the rest of the process when it is derived from the
 * open-files limit: the metrics and discovery caps below (32 + 256), and ~100 for key,
 * policy and revocation files, Redis, the OTLP exporter, listening sockets, stdio and cluster IPC.
 */
export const RESERVED_DESCRIPTORS = 400;
/**
 * Connections the metrics port keeps open at once: a few Prometheus scrapers, one
 * keep-alive connection each; room for a dozen, with each address held to its share
 * (a quarter by default, 8), so that one client cannot stop the others' scrapes.
 */
export const METRICS_MAX_CONNECTIONS = 32;
/**
 * Connections the discovery port keeps open at once: every verifier of a fleet fetches two
 * small documents and goes (keep-alive 5 s), so a thousand verifiers refreshing every
 * minute hold ~100; twice that, with each address held to its share (64 by default).
 */
export const DISCOVERY_MAX_CONNECTIONS = 256;
/**
 * The share of each port's connection cap, and of the process's stream memory
 * (maxProcessStreamMemoryMb), that the connections of one client address may hold, in
 * percent (the option `peerSharePercent`). A quarter: one address (a host, or a NAT in
 * front of many) still gets room for a burst of channels, and three quarters stay for
 * everyone else; an attacker needs four addresses, not one, to fill a port. nginx's
 * limit_conn and grpc-go leave per-client limits to the operator; behind a load balancer
 * that hides client addresses every connection has its address, and 100 turns the shares off.
 */
export const PEER_SHARE_PERCENT = 25;
/**
 * Connections every address may hold whatever the share of a small cap comes to: enough
 * for a client's few channels (grpc-js and grpc-go open one per channel and target) and a
 * Prometheus scraper's retries.
 */
export const PEER_CONNECTIONS_FLOOR = 4;

/**
 * The connections one address may hold on a port whose cap is `maxConnections`: `percent` of
 * it, at least {@link PEER_CONNECTIONS_FLOOR}, at most the cap (100: the whole cap, no share).
 */
export function peerConnectionShare(maxConnections: number, percent: number): number {
  if (percent >= 100) return maxConnections;
  return Math.min(maxConnections, Math.max(PEER_CONNECTIONS_FLOOR, Math.floor((maxConnections * percent) / 100)));
}

/**
 * New connections per address, in a token bucket: as deep as the address's connection share
 * ({@link peerConnectionShare}, at least {@link PEER_ACCEPT_RATE}), so that a client may open
 * all its channels at once (after a restart, say), refilled at {@link PEER_ACCEPT_RATE} a second.
 * Holding connections is bounded by the share; opening them is work too (an accept, a TLS
 * handshake, the first frames, and what each leaves for the garbage collector): a peer that
 * opened and dropped 12,000 connections a second with bad frames kept hundreds of MiB of closed
 * connections in the old generation. Off with the share (100). nginx's limit_req per address,
 * with its burst, is the model. @internal
 */
class PeerAcceptRate {
  readonly #depth: number;
  readonly #perSecond: number;
  /** Tokens left and when they were counted, per address below a full bucket only. */
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  /** When full buckets were last swept: at most one sweep per {@link RATE_SWEEP_MS}, so that a map of addresses still spending stays O(1) per accept. */
  #sweptAt = Number.NEGATIVE_INFINITY;

  constructor(depth: number, perSecond: number) {
    this.#depth = depth;
    this.#perSecond = perSecond;
  }

  /** Takes one token for `peer`; false when its bucket is empty. */
  take(peer: string, now: number): boolean {
    const bucket = this.#buckets.get(peer);
    const tokens = bucket === undefined ? this.#depth : Math.min(this.#depth, bucket.tokens + ((now - bucket.at) * this.#perSecond) / 1000);
    if (tokens < 1) return false;
    if (this.#buckets.size >= MAX_RATE_BUCKETS && now - this.#sweptAt >= RATE_SWEEP_MS) this.#dropFull(now);
    this.#buckets.set(peer, { tokens: tokens - 1, at: now });
    return true;
  }

  /** Forgets the addresses whose buckets have filled again: they are as if never seen. */
  #dropFull(now: number): void {
    this.#sweptAt = now;
    for (const [peer, bucket] of this.#buckets)
      if (bucket.tokens + ((now - bucket.at) * this.#perSecond) / 1000 >= this.#depth) this.#buckets.delete(peer);
  }
}

/**
 * New connections a second one address may open once its burst is spent: far above what a
 * client that keeps its channels open needs (a few a minute), and below what fills the old
 * generation with connections closed young (a few hundred a second on 2 cores).
 */
export const PEER_ACCEPT_RATE = 50;

/** Addresses whose buckets are held before full ones are swept: a spread attacker's addresses cost a sweep, not memory. */
const MAX_RATE_BUCKETS = 4096;
/** How often, at most, full buckets are swept; a bucket refills within depth / PEER_ACCEPT_RATE seconds, so most are full by the next sweep. */
const RATE_SWEEP_MS = 100;

/**
 * The bytes of the process's stream memory (`maxProcessStreamMemoryMb`, `processBytes`) one
 * address may hold over all its connections: `percent` of it (100: no share, Infinity).
 * @internal
 */
export function peerMemoryShare(processBytes: number, percent: number): number {
  return percent >= 100 ? Number.POSITIVE_INFINITY : Math.floor((processBytes * percent) / 100);
}

/**
 * Who holds a share: a client's address as node:net gives it (`socket.remoteAddress`), an
 * IPv4 address as itself (an IPv4-mapped IPv6 one too), an IPv6 address by its /64: the
 * interface identifier is the host's to pick (RFC 4291 §2.5.1, and RFC 8981 has hosts pick
 * new ones over time), so one host holds every address of its /64. No address (a socket
 * already closed) is one peer, `unknown`.
 *
 * @example
 * ```ts
 * peerKey('::ffff:192.0.2.7'); // '192.0.2.7'
 * peerKey('2001:db8:0:1::5'); // '2001:db8:0:1::/64'
 * ```
 * @internal
 */
export function peerKey(address: string | undefined): string {
  if (address === undefined || address === '') return 'unknown';
  if (!address.includes(':')) return address;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped !== null) return mapped[1] as string;
  const bare = address.split('%', 1)[0] as string;
  const [head = '', tail] = bare.split('::', 2);
  const groups = head === '' ? [] : head.split(':');
  if (tail !== undefined) {
    const after = tail === '' ? [] : tail.split(':');
    // A dotted IPv4 tail is the last two groups.
    const width = after.length + (after.at(-1)?.includes('.') === true ? 1 : 0);
    for (let i = groups.length + width; i < 8; i++) groups.push('0');
    groups.push(...after);
  }
  const prefix = groups.slice(0, 4).map((group) => (Number.parseInt(group, 16) || 0).toString(16));
  return `${prefix.join(':')}::/64`;
}

/** The soft open-files limit (RLIMIT_NOFILE) of this process, from Linux's /proc; undefined elsewhere or when unlimited. */
export function openFilesLimit(read: () => string = () => readFileSync('/proc/self/limits', 'utf8')): number | undefined {
  let text: string;
  try {
    text = read();
  } catch {
    return undefined;
  }
  const soft = /^Max open files\s+(\d+)\s/m.exec(text)?.[1];
  return soft === undefined ? undefined : Number(soft);
}

/**
 * The default cap on a gRPC server's open connections: the open-files limit less
 * {@link RESERVED_DESCRIPTORS} (at least half the limit), so that a flood of connections
 * meets a logged refusal while files, Redis and the other ports still get descriptors,
 * instead of EMFILE for everything; {@link FALLBACK_MAX_CONNECTIONS} when the limit is unknown.
 * `limit`: {@link openFilesLimit}'s.
 */
export function defaultMaxConnections(limit: number | undefined): number {
  if (limit === undefined || !Number.isSafeInteger(limit) || limit <= 0) return FALLBACK_MAX_CONNECTIONS;
  return Math.max(1, Math.max(Math.floor(limit / 2), limit - RESERVED_DESCRIPTORS));
}

/**
 * Counts events by name and writes them as one line (a warning, unless `level` says
 * otherwise) at most every {@link LOG_INTERVAL_MS}. @internal
 */
export class ThrottledWarning {
  readonly #counts = new Map<string, number>();
  #lastLine = Number.NEGATIVE_INFINITY;
  #timer: NodeJS.Timeout | undefined = undefined;

  constructor(
    private readonly logger: Logger,
    private readonly message: string,
    private readonly fields: Readonly<Record<string, unknown>>,
    private readonly level: 'info' | 'warn' = 'warn',
  ) {}

  add(name: string): void {
    this.#counts.set(name, (this.#counts.get(name) ?? 0) + 1);
    if (this.#timer !== undefined) return;
    const wait = this.#lastLine + LOG_INTERVAL_MS - Date.now();
    if (wait <= 0) this.flush();
    else this.#timer = setTimeout(() => this.flush(), wait).unref();
  }

  /** Writes what was counted since the last line, if anything. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#counts.size === 0) return;
    this.#lastLine = Date.now();
    const counts = Object.fromEntries(this.#counts);
    this.#counts.clear();
    this.logger[this.level](this.message, { ...this.fields, ...counts, intervalSeconds: LOG_INTERVAL_MS / 1000 });
  }
}

/** What a {@link ConnectionGuard} enforces on one port. @internal */
export interface ConnectionGuardOptions {
  readonly port: PortRole;
  readonly handshakeTimeoutMs: number;
  readonly maxConnections: number;
  /** The share of the cap one client address may hold, percent; default {@link PEER_SHARE_PERCENT}, 100: no share. */
  readonly peerSharePercent?: number | undefined;
  readonly logger: Logger;
  readonly counters?: ConnectionCounters | undefined;
}

/**
 * The guard of one port (of every listening socket a gRPC server binds). Attach it to each
 * net/tls/http server before it listens. @internal
 */
export class ConnectionGuard {
  readonly port: PortRole;
  readonly handshakeTimeoutMs: number;
  readonly maxConnections: number;
  /** Connections one client address (peerKey) may hold: {@link peerConnectionShare}. */
  readonly maxConnectionsPerPeer: number;
  readonly #counters: ConnectionCounters | undefined;
  readonly #failures: ThrottledWarning;
  readonly #refusals: ThrottledWarning;
  /** Connections open on the servers this guard is on. */
  #open = 0;
  /** The same, per client address (peerKey); an address leaves the map with its last connection. */
  readonly #openPerPeer = new Map<string, number>();
  /** When each TCP connection was accepted: the start of its one deadline. */
  readonly #acceptedAt = new WeakMap<Socket, number>();
  /** Whether each address is held to its share (peerSharePercent under 100). */
  readonly #sharesOn: boolean;
  /** New connections per address and second; undefined with the share off. */
  readonly #acceptRate: PeerAcceptRate | undefined;
  /**
   * Connections that may be closed to make room at the cap, each with what closes it, in the
   * order they became so (a Map keeps insertion order): those that never carried a request,
   * then those with none in flight. A connection is in at most one; busy ones in neither.
   */
  readonly #unused = new Map<Socket, () => void>();
  readonly #idle = new Map<Socket, () => void>();
  readonly #evictions: ThrottledWarning;

  constructor(options: ConnectionGuardOptions) {
    this.port = options.port;
    this.handshakeTimeoutMs = options.handshakeTimeoutMs;
    this.maxConnections = options.maxConnections;
    const percent = options.peerSharePercent ?? PEER_SHARE_PERCENT;
    this.maxConnectionsPerPeer = peerConnectionShare(options.maxConnections, percent);
    this.#sharesOn = percent < 100;
    this.#acceptRate = this.#sharesOn
      ? new PeerAcceptRate(Math.max(PEER_ACCEPT_RATE, this.maxConnectionsPerPeer), PEER_ACCEPT_RATE)
      : undefined;
    this.#counters = options.counters;
    this.#failures = new ThrottledWarning(options.logger, 'connections closed before their handshake completed', {
      port: options.port,
      handshakeTimeoutMs: options.handshakeTimeoutMs,
    });
    this.#refusals = new ThrottledWarning(
      options.logger,
      "connections refused: the open connection cap, or a client address's share of it or of new connections a second, is reached",
      {
        port: options.port,
        maxConnections: options.maxConnections,
        maxConnectionsPerPeer: this.maxConnectionsPerPeer,
      },
    );
    // Routine under a flood of idle connections, and harmless to the closed ones' clients (they reconnect): info.
    this.#evictions = new ThrottledWarning(
      options.logger,
      'connections closed at the cap to make room for new ones: they carried no request, or none in flight',
      { port: options.port, maxConnections: options.maxConnections },
      'info',
    );
  }

  /**
   * Caps the connections of `server` (with those of every other server this guard is on),
   * notes when each is accepted, and counts failed TLS handshakes. A connection past the
   * cap is destroyed before `server`'s own `connection` listeners see it, so no TLS or
   * HTTP work is done for it. (Not node:net's `maxConnections`: in a cluster worker it
   * hands the connection back to the primary, which offers it to the next worker, and
   * when every worker is full, round and round.) Call it after the listeners it gates are
   * added. A TLS server must have been created with `handshakeTimeout: guard.handshakeTimeoutMs`.
   */
  attach(server: NetServer): void {
    const listeners = server.listeners('connection') as ((socket: Socket) => void)[];
    server.removeAllListeners('connection');
    server.on('connection', (socket: Socket) => {
      if (!this.#admit(socket)) return;
      for (const listener of listeners) listener.call(server, socket);
    });
    server.on('tlsClientError', (err: NodeJS.ErrnoException, socket: Socket) => {
      // ECONNRESET: the peer went away before finishing, as a load balancer's TCP probe
      // does every few seconds; like a plaintext connection closed before its preface, not counted.
      if (err.code !== 'ECONNRESET') this.failed(err.code === 'ERR_TLS_HANDSHAKE_TIMEOUT' ? 'timeout' : 'tls');
      socket.destroy();
    });
  }

  #admit(socket: Socket): boolean {
    const full = this.#open >= this.maxConnections;
    if (full && this.#unused.size === 0 && this.#idle.size === 0) return this.#refuse(socket, 'cap');
    const peer = peerKey(socket.remoteAddress);
    const held = this.#openPerPeer.get(peer) ?? 0;
    // Before any eviction: a newcomer over its address's share or rate takes no one's place.
    // With the shares off (100 %) an address may hold the whole cap, and at it make room like any other.
    if (this.#sharesOn && held >= this.maxConnectionsPerPeer) return this.#refuse(socket, 'peer_share');
    if (this.#acceptRate !== undefined && !this.#acceptRate.take(peer, Date.now())) return this.#refuse(socket, 'peer_rate');
    if (full) this.#evictOne();
    this.#open += 1;
    this.#openPerPeer.set(peer, held + 1);
    // The TCP socket closes with the TLSSocket that wraps it.
    socket.once('close', () => {
      this.#open -= 1;
      this.#unused.delete(socket);
      this.#idle.delete(socket);
      const left = (this.#openPerPeer.get(peer) as number) - 1;
      if (left === 0) this.#openPerPeer.delete(peer);
      else this.#openPerPeer.set(peer, left);
    });
    this.#acceptedAt.set(socket, Date.now());
    this.#unused.set(socket, () => socket.destroy());
    return true;
  }

  /**
   * Closes the connection that holds the least to make room for a new one (there is one):
   * the oldest that never carried a request, else the one idle the longest. Its descriptor
   * goes with the close, so the cap is exceeded by no more than the closes in progress.
   */
  #evictOne(): void {
    const [reason, pool]: [EvictionReason, Map<Socket, () => void>] =
      this.#unused.size > 0 ? ['unused', this.#unused] : ['idle', this.#idle];
    const [socket, close] = pool.entries().next().value as [Socket, () => void];
    pool.delete(socket);
    close();
    this.#counters?.evicted(this.port, reason);
    this.#evictions.add(reason);
  }

  /**
   * `socket` has a request in flight (a stream open, an HTTP request being answered): it is
   * not closed to make room at the cap until {@link idle} says otherwise.
   */
  busy(socket: Socket): void {
    const accepted = acceptedSocket(socket);
    this.#unused.delete(accepted);
    this.#idle.delete(accepted);
  }

  /**
   * `socket` has no request in flight: at the cap it may be closed with `close` (a GOAWAY,
   * then the socket destroyed) to make room, the one idle the longest first.
   */
  idle(socket: Socket, close: () => void): void {
    const accepted = acceptedSocket(socket);
    if (accepted.destroyed || !this.#acceptedAt.has(accepted)) return;
    this.#unused.delete(accepted);
    this.#idle.delete(accepted);
    this.#idle.set(accepted, close);
  }

  /** Marks an HTTP/1.1 server's connections busy while a request is answered, idle after (closed with the socket at the cap). */
  trackRequests(server: NetServer): void {
    server.on('request', (request: { socket: Socket }, response: { once(event: 'close', listener: () => void): unknown }) => {
      const { socket } = request;
      this.busy(socket);
      response.once('close', () => this.idle(socket, () => socket.destroy()));
    });
  }

  #refuse(socket: Socket, reason: RefusalReason): false {
    socket.destroy();
    this.refused(reason);
    return false;
  }

  /**
   * Milliseconds left of `socket`'s deadline: from when its TCP connection was accepted (a
   * TLSSocket is traced to it through `_parent`, node:tls's link to the socket it wraps;
   * a socket the guard did not see starts its deadline now).
   */
  remainingMs(socket: Socket): number {
    const accepted = this.#acceptedAt.get(acceptedSocket(socket)) ?? this.#acceptedAt.get(socket) ?? Date.now();
    return Math.max(0, accepted + this.handshakeTimeoutMs - Date.now());
  }

  /** A handshake failed: counted and logged (throttled). */
  failed(reason: HandshakeFailure): void {
    this.#counters?.handshakeFailed(this.port, reason);
    this.#failures.add(reason);
  }

  /** A connection past the cap, or past its address's share, was closed: counted and logged (throttled). */
  refused(reason: RefusalReason): void {
    this.#counters?.refused(this.port, reason);
    this.#refusals.add(reason);
  }

  /** Writes the counts not yet logged; for close. */
  flush(): void {
    this.#failures.flush();
    this.#refusals.flush();
    this.#evictions.flush();
  }
}

/** node:http's answers to a request it cannot read, as it writes them when no `clientError` listener is there. */
const CLIENT_ERROR_ANSWERS: Readonly<Record<string, string>> = {
  HPE_HEADER_OVERFLOW: 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n',
  ERR_HTTP_REQUEST_TIMEOUT: 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n',
};
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';

/**
 * node:http's `clientError` handling, with a request head that missed the deadline
 * counted as a failed handshake: answers 408, 431 or 400 as node:http would, and closes. @internal
 */
export function httpClientError(guard: ConnectionGuard): (err: NodeJS.ErrnoException, socket: Socket) => void {
  return (err, socket) => {
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') guard.failed('timeout');
    answerClientError(err, socket);
  };
}

/** node:http's answer to a request it cannot read (408, 431 or 400), unless an answer went out already; then the socket is closed. @internal */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (socket.writable && socket.bytesWritten === 0) socket.write(CLIENT_ERROR_ANSWERS[err.code ?? ''] ?? BAD_REQUEST);
  socket.destroy();
}
