/**
 * The connection guard (src/base/connection-guard.ts): the cap on open connections refuses the
 * one over it and frees a slot on close; one client address holds at most its share of the
 * cap, so another still gets in; handshake failures and refusals are counted per
 * call and logged at most once per LOG_INTERVAL_MS, with the counts; the default cap follows
 * the open-files limit; an HTTP client error gets its status line once, then the socket closes.
 */
import { type Server, type Socket, connect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ConnectionGuard,
  FALLBACK_MAX_CONNECTIONS,
  type HandshakeFailure,
  LOG_INTERVAL_MS,
  PEER_CONNECTIONS_FLOOR,
  RESERVED_DESCRIPTORS,
  defaultMaxConnections,
  httpClientError,
  openFilesLimit,
  peerConnectionShare,
  peerKey,
} from '../src/base/connection-guard.js';

function recorder() {
  const warnings: { message: string; fields: Record<string, unknown> | undefined }[] = [];
  const counted: string[] = [];
  return {
    warnings,
    counted,
    logger: { info() {}, error() {}, warn: (message: string, fields?: Record<string, unknown>) => void warnings.push({ message, fields }) },
    counters: {
      handshakeFailed: (port: string, reason: HandshakeFailure) => void counted.push(`${port}:${reason}`),
      refused: (port: string, reason: string) => void counted.push(`${port}:refused:${reason}`),
      evicted: (port: string, reason: string) => void counted.push(`${port}:evicted:${reason}`),
    },
  };
}

describe('openFilesLimit and defaultMaxConnections', () => {
  const LIMITS =
    'Limit                     Soft Limit           Hard Limit           Units\nMax open files            4096                 524288               files\n';

  it('reads the soft limit, or nothing when it cannot', () => {
    expect(openFilesLimit(() => LIMITS)).toBe(4096);
    expect(openFilesLimit(() => 'Max processes 10 10 processes\n')).toBeUndefined();
    expect(openFilesLimit(() => LIMITS.replace('4096 ', 'unlimited '))).toBeUndefined();
    expect(
      openFilesLimit(() => {
        throw new Error('ENOENT');
      }),
    ).toBeUndefined();
  });

  it('leaves descriptors for the rest of the process, at least half the limit', () => {
    expect(defaultMaxConnections(4096)).toBe(4096 - RESERVED_DESCRIPTORS);
    expect(defaultMaxConnections(1024)).toBe(624);
    // 600 descriptors: 300 connections at most, so that a flood of silent sockets meets a refusal.
    expect(defaultMaxConnections(600)).toBe(300);
    expect(defaultMaxConnections(300)).toBe(150);
    expect(defaultMaxConnections(1)).toBe(1);
    for (const limit of [undefined, 0, -5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60])
      expect(defaultMaxConnections(limit)).toBe(FALLBACK_MAX_CONNECTIONS);
    expect(FALLBACK_MAX_CONNECTIONS).toBe(10_000);
  });

  it("reads this process's own limit on Linux", () => {
    const limit = openFilesLimit();
    if (process.platform === 'linux') expect(limit).toBeGreaterThan(0);
    expect(defaultMaxConnections(limit)).toBe(
      limit === undefined ? FALLBACK_MAX_CONNECTIONS : Math.max(Math.floor(limit / 2), limit - RESERVED_DESCRIPTORS),
    );
  });
});

describe('peerKey and peerConnectionShare', () => {
  it('counts an IPv4 address as itself, an IPv4-mapped one as its IPv4 address, an IPv6 one by its /64', () => {
    expect(peerKey('192.0.2.7')).toBe('192.0.2.7');
    expect(peerKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(peerKey('2001:db8:0:1::5')).toBe('2001:db8:0:1::/64');
    expect(peerKey('2001:0db8:0000:0001:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:0:1::/64');
    expect(peerKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(peerKey('::1')).toBe('0:0:0:0::/64');
    expect(peerKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(peerKey('64:ff9b::192.0.2.7')).toBe('64:ff9b:0:0::/64');
    expect(peerKey(undefined)).toBe('unknown');
  });

  it('gives each address a quarter of the cap by default, never under the floor, never over the cap; 100 % is the cap', () => {
    expect(peerConnectionShare(768, 25)).toBe(192);
    expect(peerConnectionShare(32, 25)).toBe(8);
    expect(peerConnectionShare(8, 25)).toBe(PEER_CONNECTIONS_FLOOR);
    expect(peerConnectionShare(3, 25)).toBe(3);
    expect(peerConnectionShare(768, 100)).toBe(768);
  });
});

describe('ConnectionGuard', () => {
  const servers: Server[] = [];
  const sockets: Socket[] = [];
  afterEach(async () => {
    vi.useRealTimers();
    for (const socket of sockets.splice(0)) socket.destroy();
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  });

  async function guarded(maxConnections: number, peerSharePercent?: number) {
    const r = recorder();
    const guard = new ConnectionGuard({
      port: 'metrics',
      handshakeTimeoutMs: 1000,
      maxConnections,
      peerSharePercent,
      logger: r.logger,
      counters: r.counters,
    });
    const accepted: Socket[] = [];
    const server = createServer((socket) => void accepted.push(socket));
    guard.attach(server);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    /** A connection from `localAddress`: Linux routes all of 127.0.0.0/8 to loopback, so 127.0.0.2 is a second client address. */
    const open = async (localAddress = '127.0.0.1'): Promise<{ socket: Socket; closed: Promise<void> }> => {
      const socket = connect({ port, host: '127.0.0.1', localAddress });
      sockets.push(socket);
      socket.on('error', () => undefined);
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      await new Promise((resolve) => socket.once('connect', resolve));
      return { socket, closed };
    };
    return { guard, accepted, open, ...r };
  }

  it('refuses the connection over the cap when every open one has a request in flight, counts it, and frees a slot on close', async () => {
    const { guard, accepted, open, counted, warnings } = await guarded(2);
    const first = await open();
    await open();
    await vi.waitFor(() => expect(accepted).toHaveLength(2));
    for (const socket of accepted) guard.busy(socket);
    const third = await open();
    await vi.waitFor(() => expect(third.socket.destroyed, 'refused').toBe(true), { timeout: 5000 });
    expect(accepted, 'the third never reaches the server').toHaveLength(2);
    expect(counted).toEqual(['metrics:refused:cap']);
    expect(warnings).toEqual([
      {
        message:
          "connections refused: the open connection cap, or a client address's share of it or of new connections a second, is reached",
        fields: { port: 'metrics', maxConnections: 2, maxConnectionsPerPeer: 2, cap: 1, intervalSeconds: LOG_INTERVAL_MS / 1000 },
      },
    ]);
    const serverSide = accepted[0] as Socket;
    const serverClosed = new Promise((resolve) => serverSide.once('close', resolve));
    first.socket.destroy();
    await serverClosed;
    await open();
    await vi.waitFor(() => expect(accepted).toHaveLength(3));
    expect(counted, 'the freed slot admits the next').toEqual(['metrics:refused:cap']);
    expect(accepted).toHaveLength(3);
    guard.flush();
  });

  it('at the cap, makes room by closing the oldest connection that never carried a request, then the one idle the longest, never a busy one', async () => {
    const { guard, accepted, open, counted } = await guarded(3, 100);
    for (let i = 0; i < 3; i++) {
      await open();
      await vi.waitFor(() => expect(accepted).toHaveLength(i + 1));
    }
    const [a, b, c] = accepted as [Socket, Socket, Socket];
    const closes: string[] = [];
    guard.busy(a);
    guard.idle(b, () => closes.push('b'));
    guard.busy(c);
    // `c` is unused no more, `b` is idle: the newcomer (from another address: the first holds the whole cap) takes `b`'s place.
    await open('127.0.0.2');
    await vi.waitFor(() => expect(accepted).toHaveLength(4));
    expect(closes).toEqual(['b']);
    const d = accepted[3] as Socket;
    // `d` never carried a request: the next newcomer takes its place, before any idle one.
    guard.idle(a, () => closes.push('a'));
    await open('127.0.0.3');
    await vi.waitFor(() => expect(accepted).toHaveLength(5));
    await vi.waitFor(() => expect(d.destroyed, 'the unused connection is closed').toBe(true));
    expect(closes).toEqual(['b']);
    expect(counted).toEqual(['metrics:evicted:idle', 'metrics:evicted:unused']);
    guard.flush();
  });

  it('holds one client address to its share of the cap: another address still gets in, and the refusals are counted', async () => {
    // A cap of 40 at 25 %: 10 connections per address.
    const { guard, accepted, open, counted, warnings } = await guarded(40);
    expect(guard.maxConnectionsPerPeer).toBe(10);
    const attacker = await Promise.all(Array.from({ length: 15 }, () => open('127.0.0.2')));
    await vi.waitFor(() => expect(attacker.filter(({ socket }) => socket.destroyed)).toHaveLength(5), { timeout: 5000 });
    expect(accepted, 'the first 10 of 15 are admitted').toHaveLength(10);
    expect(counted).toEqual(Array.from({ length: 5 }, () => 'metrics:refused:peer_share'));
    const legitimate = await open('127.0.0.1');
    await vi.waitFor(() => expect(accepted).toHaveLength(11));
    expect(legitimate.socket.destroyed, 'the other address is served').toBe(false);
    expect(warnings[0]?.fields).toMatchObject({ maxConnections: 40, maxConnectionsPerPeer: 10, peer_share: 1 });
    // The attacker's share comes back as its connections close.
    const serverSide = accepted.find((socket) => socket.remoteAddress === '127.0.0.2') as Socket;
    const serverClosed = new Promise((resolve) => serverSide.once('close', resolve));
    serverSide.destroy();
    await serverClosed;
    await open('127.0.0.2');
    await vi.waitFor(() => expect(accepted).toHaveLength(12));
    guard.flush();
  });

  /**
   * Opens `count` connections from `address` in batches of 50 (under the address's share of
   * 100 held at once), each closed once open: quick enough that the rate cannot refill meanwhile.
   */
  async function churn(open: (address: string) => Promise<{ socket: Socket; closed: Promise<void> }>, address: string, count: number) {
    for (let done = 0; done < count; done += 50) {
      const batch = await Promise.all(Array.from({ length: Math.min(50, count - done) }, () => open(address)));
      for (const { socket } of batch) socket.destroy();
      await Promise.all(batch.map(({ closed }) => closed));
    }
  }

  it('holds one client address to its rate of new connections: past it refused as accepted, another address still gets in', async () => {
    // A cap of 400 at 25 %: 100 connections per address, and 100 new ones a second.
    const { accepted, open, counted } = await guarded(400);
    await churn(open, '127.0.0.2', 200);
    await vi.waitFor(() => expect(accepted.length + counted.length, 'every connection seen by the server').toBe(200));
    expect(counted.length, 'refused past the rate').toBeGreaterThan(0);
    expect(
      counted.every((entry) => entry === 'metrics:refused:peer_rate'),
      counted.join(),
    ).toBe(true);
    const before = accepted.length;
    expect(before).toBeLessThan(200);
    const legitimate = await open('127.0.0.1');
    await vi.waitFor(() => expect(accepted).toHaveLength(before + 1));
    expect(legitimate.socket.destroyed, 'the other address is served').toBe(false);
  });

  it('with a share of 100 percent an address has no rate of new connections either (behind a load balancer)', async () => {
    const { accepted, open, counted } = await guarded(400, 100);
    await churn(open, '127.0.0.2', 200);
    await vi.waitFor(() => expect(accepted).toHaveLength(200));
    expect(counted).toEqual([]);
  });

  it('with a share of 100 percent one address may take the whole cap (behind a load balancer)', async () => {
    const { guard, accepted, open, counted } = await guarded(12, 100);
    expect(guard.maxConnectionsPerPeer).toBe(12);
    await Promise.all(Array.from({ length: 12 }, () => open('127.0.0.2')));
    await vi.waitFor(() => expect(accepted).toHaveLength(12));
    expect(counted).toEqual([]);
    guard.flush();
  });

  it('logs at most one line per interval, with what happened meanwhile', () => {
    vi.useFakeTimers();
    const r = recorder();
    const guard = new ConnectionGuard({
      port: 'grpc',
      handshakeTimeoutMs: 5000,
      maxConnections: 10,
      logger: r.logger,
      counters: r.counters,
    });
    guard.failed('timeout');
    guard.failed('tls');
    guard.failed('tls');
    guard.failed('preface');
    expect(r.counted).toEqual(['grpc:timeout', 'grpc:tls', 'grpc:tls', 'grpc:preface']);
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toEqual({
      message: 'connections closed before their handshake completed',
      fields: { port: 'grpc', handshakeTimeoutMs: 5000, timeout: 1, intervalSeconds: 10 },
    });
    vi.advanceTimersByTime(LOG_INTERVAL_MS - 1);
    expect(r.warnings).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(r.warnings[1]?.fields).toEqual({ port: 'grpc', handshakeTimeoutMs: 5000, tls: 2, preface: 1, intervalSeconds: 10 });
    vi.advanceTimersByTime(LOG_INTERVAL_MS * 3);
    expect(r.warnings, 'nothing new, no line').toHaveLength(2);
  });
});

describe('httpClientError', () => {
  function fakeSocket(bytesWritten = 0) {
    const written: string[] = [];
    return {
      written,
      destroyed: false,
      writable: true,
      bytesWritten,
      write: (s: string) => written.push(s),
      destroy() {
        this.destroyed = true;
      },
    };
  }

  it.each([
    ['HPE_HEADER_OVERFLOW', 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n'],
    ['ERR_HTTP_REQUEST_TIMEOUT', 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n'],
    ['HPE_INVALID_METHOD', 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n'],
  ])('%s: answers %j and closes', (code, answer) => {
    const r = recorder();
    const guard = new ConnectionGuard({
      port: 'discovery',
      handshakeTimeoutMs: 1000,
      maxConnections: 1,
      logger: r.logger,
      counters: r.counters,
    });
    const socket = fakeSocket();
    httpClientError(guard)(Object.assign(new Error(code), { code }), socket as unknown as Socket);
    expect(socket.written).toEqual([answer]);
    expect(socket.destroyed).toBe(true);
    expect(r.counted).toEqual(code === 'ERR_HTTP_REQUEST_TIMEOUT' ? ['discovery:timeout'] : []);
  });

  it('writes nothing after a response began', () => {
    const r = recorder();
    const guard = new ConnectionGuard({ port: 'discovery', handshakeTimeoutMs: 1000, maxConnections: 1, logger: r.logger });
    const socket = fakeSocket(10);
    httpClientError(guard)(Object.assign(new Error('x'), { code: 'HPE_INVALID_METHOD' }), socket as unknown as Socket);
    expect(socket.written).toEqual([]);
    expect(socket.destroyed).toBe(true);
  });
});
