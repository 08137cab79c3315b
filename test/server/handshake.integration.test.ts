/**
 * Nothing held before authentication (src/base/connection-guard.ts): on each
 * transport, over real sockets on loopback, a connection that does not finish its TLS
 * handshake and HTTP/2 preface (or its HTTP request head, on the metrics and discovery
 * ports) within handshakeTimeoutMs is closed, counted and logged; past maxConnections a new
 * connection is closed as it is accepted while those open keep working; one client address
 * (127.0.0.2 here: Linux routes all of 127.0.0.0/8 to loopback) holds at most its share
 * of each port's cap, so a caller at 127.0.0.1 still gets in. The deadlines are
 * short here so each test takes seconds; Node's own bounds (120 s for TLS, none for the
 * preface, 60 s for a request head) would fail every one.
 */
import { credentials } from '@grpc/grpc-js';
import { type Socket, connect as connectTcp } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type TestCerts, hasOpenssl, makeTestCerts, mutualTlsArgs } from '../../bench/kit/certs.js';
import { serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';
import { type JwtServer, type JwtServerOptions, type KeySet, type Logger, type Transport, createJwtServer } from '../../src/lib/index.js';
import { ClientPool } from '../../bench/kit/grpc-clients.js';
import { TRANSPORTS, closeAllServers, sharedKeys, trackServer, transportArgs } from '../../bench/kit/jwt-servers.js';

const clients = new ClientPool();
let certs: TestCerts;
let keys: KeySet;
/** Sockets a test opened, destroyed after it. */
const sockets = new Set<Socket>();

beforeAll(async () => {
  if (!hasOpenssl()) throw new Error('these tests need the openssl command on PATH');
  certs = makeTestCerts();
  keys = await sharedKeys();
});

afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  clients.closeAll();
  await closeAllServers();
  await killAll();
});

afterAll(() => certs?.remove());

/** The deadline of most tests: short, yet far above a loopback handshake on a busy machine. */
const DEADLINE_MS = 1000;
/** What closing may take beyond the deadline: node:http checks its timeouts every second at most, and the machine is shared. */
const SLACK_MS = 1500;
const ISSUER = 'https://issuer.example';
const AS_LOCALHOST = { channelOptions: { 'grpc.ssl_target_name_override': 'localhost' } } as const;

type Line = { message: string; fields: Record<string, unknown> };

/** A logger that keeps the warnings and the info lines. */
function recordingLogger(): Logger & { warnings: Line[]; infos: Line[] } {
  const warnings: Line[] = [];
  const infos: Line[] = [];
  return {
    info: (message, fields) => infos.push({ message, fields: { ...fields } }),
    error: () => undefined,
    warn: (message, fields) => warnings.push({ message, fields: { ...fields } }),
    warnings,
    infos,
  };
}

interface Started {
  readonly server: JwtServer;
  readonly port: number;
  readonly logger: ReturnType<typeof recordingLogger>;
}

async function start(transport: Transport, tls: boolean, options: JwtServerOptions = {}): Promise<Started> {
  const logger = recordingLogger();
  const server = trackServer(createJwtServer({ transport, keys, logger, handshakeTimeoutMs: DEADLINE_MS, metricsPort: 0, ...options }));
  const port = await server.listen('127.0.0.1:0', tls ? { cert: certs.serverCert, key: certs.serverKey } : undefined);
  return { server, port, logger };
}

/** A TCP connection from `localAddress`, read from (so its close is seen); resolves once connected. */
function tcp(port: number, localAddress = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connectTcp({ port, host: '127.0.0.1', localAddress }, () => resolve(socket));
    sockets.add(socket);
    socket.on('error', reject);
    socket.resume();
  });
}

/** A finished TLS handshake (ALPN h2) that then sends nothing, over `socket` when given. */
function tlsSilent(port: number, socket?: Socket): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const tls = connectTls({ port, host: '127.0.0.1', socket, ca: certs.caCert, servername: 'localhost', ALPNProtocols: ['h2'] }, () =>
      resolve(tls),
    );
    sockets.add(tls);
    tls.on('error', reject);
    tls.resume();
  });
}

/** The client preface and an empty SETTINGS frame: an HTTP/2 handshake done, from the client's side. */
const H2_PREFACE = Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]);

/**
 * An idle client at `localAddress`: it finishes its handshake (TLS when `tls`, then the
 * HTTP/2 preface and SETTINGS) and sends nothing more. Resolves once connected, or once
 * refused (then already closed).
 */
function idleHttp2(port: number, tls: boolean, localAddress: string): Promise<Socket> {
  return new Promise((resolve) => {
    const connected = (): void => {
      socket.write(H2_PREFACE);
      resolve(socket);
    };
    const raw = connectTcp({ port, host: '127.0.0.1', localAddress }, tls ? undefined : connected);
    const socket = tls ? connectTls({ socket: raw, ca: certs.caCert, servername: 'localhost', ALPNProtocols: ['h2'] }, connected) : raw;
    sockets.add(raw);
    sockets.add(socket);
    raw.on('error', () => resolve(socket));
    socket.on('error', () => resolve(socket));
    socket.on('close', () => resolve(socket));
    socket.resume();
  });
}

/** `count` silent TCP connections from `localAddress` at once; those the server refuses are in the list too (already closing). */
function silentFrom(port: number, count: number, localAddress: string): Promise<Socket[]> {
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Socket>((resolve) => {
          const socket = connectTcp({ port, host: '127.0.0.1', localAddress }, () => resolve(socket));
          sockets.add(socket);
          socket.on('error', () => resolve(socket));
          socket.resume();
        }),
    ),
  );
}

/** Milliseconds from `since` until `socket` closes; rejects if it is still open after `limitMs`. */
function closedWithin(socket: Socket, since: number, limitMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    if (socket.destroyed) return resolve(Date.now() - since);
    const timer = setTimeout(() => reject(new Error(`still open after ${Date.now() - since} ms`)), limitMs);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Date.now() - since);
    });
  });
}

/** The value of one sample of `/metrics`, 0 when absent. */
async function sample(metricsPort: number, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}{`) && candidate.includes(labels));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const failures = 'jwt_grpc_handshake_failures_total';

describe.each(TRANSPORTS)('on transport %s', (transport) => {
  describe('the gRPC port over TLS', () => {
    it('closes a TCP connection that never starts its TLS handshake, and counts it', async () => {
      const { server, port } = await start(transport, true);
      const since = Date.now();
      const socket = await tcp(port);
      const after = await closedWithin(socket, since, DEADLINE_MS + SLACK_MS);
      expect(after).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
      expect(await sample(server.metricsPort as number, failures, 'port="grpc",reason="timeout"')).toBe(1);
    });

    it('closes a connection that finishes TLS but never sends the HTTP/2 preface, and counts it', async () => {
      const { server, port } = await start(transport, true);
      const since = Date.now();
      const socket = await tlsSilent(port);
      const after = await closedWithin(socket, since, DEADLINE_MS + SLACK_MS);
      expect(after).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
      expect(await sample(server.metricsPort as number, failures, 'port="grpc",reason="timeout"')).toBe(1);
    });

    it('gives TLS and the preface one deadline together, from the TCP accept', async () => {
      // 2 s for both; the TLS handshake starts 1.5 s in. Two deadlines would close at 3.5 s.
      const { port } = await start(transport, true, { handshakeTimeoutMs: 2000 });
      const since = Date.now();
      const raw = await tcp(port);
      raw.pause();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const socket = await tlsSilent(port, raw);
      expect(await closedWithin(socket, since, 2000 + SLACK_MS)).toBeLessThan(3000);
    });

    it('counts a failed TLS handshake, logging one line for many, without what the peer sent', async () => {
      const { server, port, logger } = await start(transport, true);
      for (let i = 0; i < 3; i++) {
        const socket = await tcp(port);
        socket.write('SECRET-LOOKING BYTES, NOT TLS\r\n\r\n');
        await closedWithin(socket, Date.now(), DEADLINE_MS + SLACK_MS);
      }
      expect(await sample(server.metricsPort as number, failures, 'port="grpc",reason="tls"')).toBe(3);
      await server.close({ graceMs: 0 });
      const lines = logger.warnings.filter((line) => line.message.startsWith('connections closed before their handshake'));
      // The first at once, the rest at the end of the interval (here: at close), with their count.
      expect(lines.length).toBe(2);
      expect(lines.reduce((sum, line) => sum + (line.fields.tls as number), 0)).toBe(3);
      expect(lines[0]?.fields).toMatchObject({ port: 'grpc', handshakeTimeoutMs: DEADLINE_MS, intervalSeconds: 10 });
      expect(JSON.stringify(logger.warnings)).not.toContain('SECRET');
    });

    it('counts nothing for a connection closed before its TLS handshake (a TCP probe)', async () => {
      const { server, port, logger } = await start(transport, true);
      for (let i = 0; i < 3; i++) {
        const socket = await tcp(port);
        socket.end();
        await closedWithin(socket, Date.now(), DEADLINE_MS + SLACK_MS);
      }
      // A TLS failure after them is counted: the probes were seen and left out.
      const bad = await tcp(port);
      bad.write('not TLS\r\n\r\n');
      await closedWithin(bad, Date.now(), DEADLINE_MS + SLACK_MS);
      await expect.poll(() => sample(server.metricsPort as number, failures, 'port="grpc",reason="tls"')).toBe(1);
      expect(logger.warnings.filter((line) => line.message.startsWith('connections closed before their handshake'))).toHaveLength(1);
    });
  });

  describe('the gRPC port in plaintext (h2c)', () => {
    it('closes a connection that never sends the preface, and counts it', async () => {
      const { server, port } = await start(transport, false);
      const since = Date.now();
      const socket = await tcp(port);
      const after = await closedWithin(socket, since, DEADLINE_MS + SLACK_MS);
      expect(after).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
      expect(await sample(server.metricsPort as number, failures, 'port="grpc",reason="timeout"')).toBe(1);
    });

    it('counts a connection that sends no HTTP/2 preface', async () => {
      const { server, port } = await start(transport, false);
      const socket = await tcp(port);
      // Neither HTTP/2 nor HTTP/1.1 (which the own transport serves on the same port).
      socket.write('SSH-2.0-OpenSSH_9.6\r\n');
      await closedWithin(socket, Date.now(), DEADLINE_MS + SLACK_MS);
      await expect.poll(() => sample(server.metricsPort as number, failures, 'port="grpc",reason="preface"')).toBe(1);
    });
  });

  describe('the connection cap', () => {
    it('at the cap, a new connection takes the place of the oldest one that never carried a request; a client with calls keeps working', async () => {
      // A long deadline: the silent sockets below stay open unless something makes room.
      const { server, port, logger } = await start(transport, true, { maxConnections: 3, handshakeTimeoutMs: 30_000 });
      const creds = credentials.createSsl(certs.caCert);
      const client = clients.jwt(port, { credentials: creds, ...AS_LOCALHOST });
      expect((await client.generateJwt({ algorithm: 'ES256', subject: 'a@example.com' })).sub).toBe('a@example.com');
      // Each from an address of its own: one address's share of a cap of 3 is all of it.
      const oldest = await tcp(port, '127.0.0.2');
      const silent = await tcp(port, '127.0.0.3');
      const since = Date.now();
      const newcomer = await tcp(port, '127.0.0.4');
      expect(await closedWithin(oldest, since, 2000), 'closed as the newcomer was accepted, not at its 30 s deadline').toBeLessThan(2000);
      expect(silent.destroyed).toBe(false);
      expect(newcomer.destroyed).toBe(false);
      expect((await client.generateJwt({ algorithm: 'ES256', subject: 'b@example.com' })).sub).toBe('b@example.com');
      const metricsPort = server.metricsPort as number;
      expect(await sample(metricsPort, 'jwt_grpc_connections_evicted_total', 'port="grpc",reason="unused"')).toBe(1);
      expect(await sample(metricsPort, 'jwt_grpc_connections_refused_total', 'port="grpc",reason="cap"')).toBe(0);
      await expect
        .poll(() => logger.infos.find((line) => line.message.startsWith('connections closed at the cap'))?.fields)
        .toMatchObject({ port: 'grpc', maxConnections: 3, unused: 1 });
    });
  });

  describe("a client address's share of the connection cap", () => {
    it.each([false, true])(
      'tls %s: one address holding idle connections up to its share cannot stop a caller at another address; its refused ones are counted',
      async (tls) => {
        // A cap of 40: 10 connections per address (peerSharePercent 25). A long deadline: the idle connections stay.
        const { server, port, logger } = await start(transport, tls, { maxConnections: 40, handshakeTimeoutMs: 30_000 });
        const attacker = await Promise.all(Array.from({ length: 60 }, () => idleHttp2(port, tls, '127.0.0.2')));
        // Accepted after the attacker's 60: with no share it would find the cap full.
        const client = clients.jwt(port, tls ? { credentials: credentials.createSsl(certs.caCert), ...AS_LOCALHOST } : {});
        expect((await client.generateJwt({ algorithm: 'ES256', subject: 'a@example.com' })).sub).toBe('a@example.com');
        const metricsPort = server.metricsPort as number;
        await expect.poll(() => sample(metricsPort, 'jwt_grpc_connections_refused_total', 'port="grpc",reason="peer_share"')).toBe(50);
        expect(
          attacker.filter((socket) => !socket.destroyed),
          'the attacker keeps its share',
        ).toHaveLength(10);
        expect(await sample(metricsPort, 'jwt_grpc_connections_refused_total', 'port="grpc",reason="cap"')).toBe(0);
        await expect
          .poll(() => logger.warnings.find((line) => line.message.startsWith('connections refused'))?.fields)
          .toMatchObject({ port: 'grpc', maxConnections: 40, maxConnectionsPerPeer: 10, peer_share: 1 });
      },
    );
  });
});

describe('the metrics and discovery ports', () => {
  it('closes a slow request head on the metrics port, and counts it', async () => {
    const { server } = await start('http2', false);
    const metricsPort = server.metricsPort as number;
    const socket = await tcp(metricsPort);
    const since = Date.now();
    socket.write('GET /metrics HTTP/1.1\r\nhost: x\r\n');
    const after = await closedWithin(socket, since, DEADLINE_MS + SLACK_MS);
    expect(after).toBeGreaterThanOrEqual(DEADLINE_MS - 100);
    expect(await sample(metricsPort, failures, 'port="metrics",reason="timeout"')).toBe(1);
  });

  it('closes a slow request head on the discovery port, and counts it', async () => {
    const { server } = await start('http2', false, { httpPort: 0, issuer: ISSUER });
    const socket = await tcp(server.httpPort as number);
    const since = Date.now();
    socket.write('GET /.well-known/jwks.json HTTP/1.1\r\nhost: x\r\n');
    const after = await closedWithin(socket, since, DEADLINE_MS + SLACK_MS);
    expect(after).toBeGreaterThanOrEqual(DEADLINE_MS - 100);
    expect(await sample(server.metricsPort as number, failures, 'port="discovery",reason="timeout"')).toBe(1);
  });

  it('closes a TLS connection to the discovery port that never starts its handshake', async () => {
    const { server } = await start('http2', true, { httpPort: 0, issuer: ISSUER });
    const since = Date.now();
    const socket = await tcp(server.httpPort as number);
    await closedWithin(socket, since, DEADLINE_MS + SLACK_MS);
    expect(await sample(server.metricsPort as number, failures, 'port="discovery",reason="timeout"')).toBe(1);
  });

  it('metrics port: 40 silent sockets from one address hold its share (8 of 32); a scraper at another address is served', async () => {
    const { server } = await start('http2', false, { handshakeTimeoutMs: 30_000 });
    const metricsPort = server.metricsPort as number;
    const attacker = await silentFrom(metricsPort, 40, '127.0.0.2');
    const scrape = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(scrape.status).toBe(200);
    expect(await scrape.text()).toContain('jwt_grpc_connections_refused_total{port="metrics",reason="peer_share"} 32');
    await expect.poll(() => attacker.filter((socket) => socket.destroyed).length).toBe(32);
  });

  it('discovery port: 300 silent sockets from one address hold its share (64 of 256); a verifier at another address gets the JWK Set', async () => {
    const { server } = await start('http2', false, { handshakeTimeoutMs: 30_000, httpPort: 0, issuer: ISSUER });
    const attacker = await silentFrom(server.httpPort as number, 300, '127.0.0.2');
    const jwks = await fetch(`http://127.0.0.1:${server.httpPort}/.well-known/jwks.json`);
    expect(jwks.status).toBe(200);
    expect(((await jwks.json()) as { keys: unknown[] }).keys.length).toBeGreaterThan(0);
    await expect.poll(() => attacker.filter((socket) => socket.destroyed).length).toBe(236);
    expect(await sample(server.metricsPort as number, 'jwt_grpc_connections_refused_total', 'port="discovery",reason="peer_share"')).toBe(
      236,
    );
  });

  it('caps the metrics port on its own: at its cap a scrape takes the place of the oldest silent connection, and the gRPC port is unaffected', async () => {
    // Every address its whole cap (32): the cap is what acts here.
    const { server, port, logger } = await start('http2', false, { handshakeTimeoutMs: 30_000, peerSharePercent: 100 });
    const metricsPort = server.metricsPort as number;
    const held: Socket[] = [];
    for (let i = 0; i < 32; i++) held.push(await tcp(metricsPort));
    expect(await sample(metricsPort, 'jwt_grpc_connections_evicted_total', 'port="metrics",reason="unused"')).toBeGreaterThanOrEqual(1);
    // The scrape above made room: the oldest silent connection is the one closed.
    await expect.poll(() => held[0]?.destroyed).toBe(true);
    await expect
      .poll(() => logger.infos.filter((line) => line.message.startsWith('connections closed at the cap') && line.fields.port === 'metrics'))
      .toHaveLength(1);
    const client = clients.jwt(port);
    expect((await client.generateJwt({ algorithm: 'ES256', subject: 'a@example.com' })).sub).toBe('a@example.com');
  });
});

/** `count` TCP connections at once; those the server refuses are in the list too (already closing). */
function flood(port: number, count: number): Promise<Socket[]> {
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Socket>((resolve) => {
          const socket = connectTcp(port, '127.0.0.1', () => resolve(socket));
          sockets.add(socket);
          socket.on('error', () => resolve(socket));
          socket.resume();
        }),
    ),
  );
}

/** The sum of every sample of `name` in the text of `/metrics`. */
async function total(metricsPort: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

describe('in a cluster each worker holds each address to its share of its own cap', () => {
  it('two workers, a cap of 20 each: 60 idle connections from one address are held to 5 per worker, and a caller at another address is served', async () => {
    const cli = await startCli(serveArgs('--max-connections', '20', '--handshake-timeout-ms', '30000', '--metrics-port', '0'), {
      env: { NODEMAXPROCS: '2' },
    });
    const metricsPort = Number(/metrics: http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(cli.stdout)?.[1]);
    const attacker = await Promise.all(Array.from({ length: 60 }, () => idleHttp2(cli.port, false, '127.0.0.2')));
    const client = clients.jwt(cli.port);
    expect((await client.generateJwt({ algorithm: 'ES256', subject: 'a@example.com' })).sub).toBe('a@example.com');
    // However the primary spreads them, no worker keeps more than 5: at least 50 refused.
    await expect.poll(() => attacker.filter((socket) => socket.destroyed).length).toBeGreaterThanOrEqual(50);
    expect(attacker.filter((socket) => !socket.destroyed).length).toBeLessThanOrEqual(10);
    await expect
      .poll(() => sample(metricsPort, 'jwt_grpc_connections_refused_total', 'port="grpc",reason="peer_share"'))
      .toBe(attacker.filter((socket) => socket.destroyed).length);
  }, 30_000);
});

describe('the issue: `jwt-grpc serve` with 600 open files, a flood of silent sockets on its mutual TLS port', () => {
  it.each([
    ['http2', 1],
    ['grpc-js', 1],
    ['http2', 2],
  ] as const)(
    'on transport %s with %i process(es): calls on open connections go on, the flood is refused, logged and counted, and new clients get in after the deadline',
    async (transport, workers) => {
      const cli = await startCli(
        serveArgs(
          ...transportArgs(transport),
          ...mutualTlsArgs(certs),
          '--handshake-timeout-ms',
          '3000',
          '--metrics-port',
          '0',
          // Two workers: a cap each (the default, from 600 files, would be 300 each and hold the whole flood).
          ...(workers > 1 ? ['--max-connections', '100'] : []),
        ),
        { openFiles: 600, env: workers > 1 ? { NODEMAXPROCS: String(workers) } : {} },
      );
      const metricsPort = Number(/metrics: http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(cli.stdout)?.[1]);
      const mtls = credentials.createSsl(certs.caCert, certs.clientKey, certs.clientCert);
      const client = clients.jwt(cli.port, { credentials: mtls, ...AS_LOCALHOST });
      expect((await client.generateJwt({ algorithm: 'ES256', subject: 'before@example.com' })).sub).toBe('before@example.com');

      // In a cluster the primary accepts every connection before a worker takes it over: a
      // burst past its own 600 descriptors is dropped by libuv uncounted, so the flood is smaller.
      const count = workers > 1 ? 400 : 650;
      const silent = await flood(cli.port, count);
      expect((await client.generateJwt({ algorithm: 'ES256', subject: 'during@example.com' })).sub).toBe('during@example.com');
      await cli.waitFor(
        'stderr',
        /connections refused: the open connection cap, or a client address's share of it or of new connections a second, is reached/,
        5000,
      );

      // After the deadline every silent socket is closed, refused at once or timed out, and counted.
      await Promise.all(silent.map((socket) => closedWithin(socket, Date.now(), 3000 + SLACK_MS + 2000)));
      await expect
        .poll(async () => (await total(metricsPort, 'jwt_grpc_connections_refused_total')) + (await total(metricsPort, failures)), {
          timeout: 5000,
        })
        .toBe(count);
      const fresh = clients.jwt(cli.port, {
        credentials: mtls,
        channelOptions: { ...AS_LOCALHOST.channelOptions, 'grpc.primary_user_agent': 'fresh' },
      });
      expect((await fresh.generateJwt({ algorithm: 'ES256', subject: 'after@example.com' })).sub).toBe('after@example.com');
      expect(cli.stderr).toMatch(/connections closed before their handshake completed/);
      expect(cli.stderr).not.toMatch(/EMFILE/);
    },
    60_000,
  );
});
