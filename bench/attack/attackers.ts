/**
 * The attacks of `npm run bench:attack`, each what a peer with nothing but a TCP connection
 * (no credential) can do to hold what legitimate callers need. Each runs from its own source
 * address (127.0.0.2 by default: Linux routes all of 127.0.0.0/8 to loopback), replaces what
 * the server takes back, and counts what it opened and what the server closed, so that a
 * guard shows as connections closed rather than as an attack that stopped by itself. One
 * attack, the issuance flood, is a caller with a credential: a client certificate the policy
 * allows, asking for tokens as fast as the server answers.
 */
import { readFileSync } from 'node:fs';
import { type ClientHttp2Session, type ClientHttp2Stream, type OutgoingHttpHeaders, connect as connectHttp2 } from 'node:http2';
import { type Socket, connect as connectTcp } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { encodeGenerateJwtRequest, grpcFrame } from '../kit/grpc-body.js';

/** Where the attacker aims: the server's ports on one host. */
export interface AttackTarget {
  readonly host: string;
  readonly grpcPort: number;
  readonly httpPort: number | undefined;
  readonly metricsPort: number | undefined;
  /** The attacker's source address: the first of `spread` consecutive ones. */
  readonly from: string;
  /** How many addresses the attacker spreads its connections over, from `from` up (default 1): a spread attacker's. */
  readonly spread?: number;
  /** The attacker's client certificate and the CA of the server's (files): the issuance flood calls over mutual TLS. */
  readonly tls?: AttackTls;
}

/** PEM files for a mutual-TLS caller. */
export interface AttackTls {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/** What an attack did, read when it stops. */
export interface AttackCounts {
  /** Connections it opened. */
  opened: number;
  /** Connections the server closed (GOAWAY, reset or end of socket) before the attacker did. */
  closedByServer: number;
  /** Connections that could not be opened (refused at accept, or the connect failed). */
  failedToOpen: number;
  /** Streams (requests) it opened. */
  streams: number;
  /** Streams the server refused or reset; in the issuance flood, calls answered RESOURCE_EXHAUSTED (over the caller's rate). */
  streamsRefused: number;
}

/** A running attack. */
export interface Attack {
  readonly counts: AttackCounts;
  /** Stops the attack and releases everything it holds. */
  stop(): void;
}

/** Connections of the half-open and window-0 attacks: the attacker held 24. */
const HALF_OPEN_CONNECTIONS = 24;
const WINDOW0_CONNECTIONS = 24;
/** Idle connections: more than a server under an open-files limit of 1024 may hold (its cap is 768). */
const IDLE_CONNECTIONS = 800;

/** The issuance flood: connections, and GenerateJwt calls each keeps in flight (a new one as each is answered). */
const FLOOD_CONNECTIONS = 2;
const FLOOD_STREAMS = 32;
/** The subject the flooding caller's policy entry allows. */
export const FLOOD_SUBJECT = 'flood';

export const ATTACKS = ['half-open', 'idle', 'silent', 'window0', 'churn', 'issuer-flood'] as const;
export type AttackName = (typeof ATTACKS)[number];

/** One line per attack, for the help text and the report. */
export const ATTACK_DESCRIPTIONS: Readonly<Record<AttackName, string>> = {
  'half-open': `${HALF_OPEN_CONNECTIONS} connections opening GenerateJwt streams that send 14 KiB of HPACK-indexed headers and part of a message, never the end: 4 fill the stream memory (200 streams per 200 ms until one is refused, then one: under the refused-stream refill), the rest hold 200 streams each, under the readers' share`,
  idle: `${IDLE_CONNECTIONS} HTTP/2 connections that finish the handshake and then send nothing (server under an open-files limit of 1024)`,
  silent: 'silent TCP sockets replaced every 9 s on every port: 800 on gRPC, 140 on discovery, 20 on metrics',
  window0: `${WINDOW0_CONNECTIONS} connections with SETTINGS_INITIAL_WINDOW_SIZE 0 opening whole calls and never reading the answers`,
  churn: 'short connections carrying mutated frames, 4 at a time, as fast as the server takes them',
  'issuer-flood': `one caller the policy allows (its own client certificate), ${FLOOD_CONNECTIONS} mutual-TLS connections each keeping ${FLOOD_STREAMS} GenerateJwt calls in flight, with a status list: every token would take an index`,
};

/** How often each attacking connection adds a stream (the attacker: one every 200 ms, under the refused-stream refill). */
const STREAM_EVERY_MS = 200;
/**
 * How soon a held connection the server closed is opened again: an attacker wants its slots
 * back quickly, but one that reconnects in a busy loop is a connect flood, which the kernel's
 * accept queue meets before any code of ours (800 connections retried every second is already
 * 800 connects a second).
 */
const RECONNECT_MS = 1000;
/** How long a silent socket is kept before it is replaced: just under the 10 s handshake deadline. */
const SILENT_REPLACE_MS = 9000;
/** Silent sockets held per port. */
const SILENT_PER_PORT = { grpc: 800, http: 140, metrics: 20 } as const;

/**
 * The source address of the attacker's next connection: `from` and the `spread - 1`
 * addresses after it in turn (127.0.0.2, 127.0.0.3, ...: Linux routes all of 127.0.0.0/8 to
 * loopback), so that each address holds an equal part of what the attack holds.
 */
function sourceAddresses(target: AttackTarget): () => string {
  const octets = target.from.split('.').map(Number);
  const spread = target.spread ?? 1;
  let next = 0;
  return () => {
    const last = (octets[3] as number) + (next++ % spread);
    return [octets[0], octets[1], (octets[2] as number) + Math.floor(last / 256), last % 256].join('.');
  };
}

function newCounts(): AttackCounts {
  return { opened: 0, closedByServer: 0, failedToOpen: 0, streams: 0, streamsRefused: 0 };
}

const GENERATE_PATH = '/jwt.services.JwtService/GenerateJwt';
const REQUEST_HEADERS = { ':method': 'POST', ':path': GENERATE_PATH, 'content-type': 'application/grpc', te: 'trailers' };

/**
 * Keeps `count` HTTP/2 sessions open from the target's source addresses, opening a new one for each the
 * server closes; `onSession` runs on each once its SETTINGS arrived.
 */
function holdSessions(
  target: AttackTarget,
  count: number,
  settings: { initialWindowSize?: number },
  onSession: (session: ClientHttp2Session) => void,
  counts: AttackCounts = newCounts(),
): Attack {
  const sessions = new Set<ClientHttp2Session>();
  const tls =
    target.tls === undefined
      ? undefined
      : { ca: readFileSync(target.tls.ca), cert: readFileSync(target.tls.cert), key: readFileSync(target.tls.key) };
  const { host, grpcPort: port } = target;
  const nextAddress = sourceAddresses(target);
  let stopped = false;
  const open = (): void => {
    if (stopped) return;
    counts.opened++;
    const localAddress = nextAddress();
    const session = connectHttp2(`${tls === undefined ? 'http' : 'https'}://${host}:${port}`, {
      settings,
      createConnection: () =>
        tls === undefined
          ? connectTcp({ host, port, localAddress })
          : connectTls({ socket: connectTcp({ host, port, localAddress }), servername: 'localhost', ALPNProtocols: ['h2'], ...tls }),
    });
    sessions.add(session);
    let ready = false;
    session.on('error', () => {});
    session.once('remoteSettings', () => {
      ready = true;
      onSession(session);
    });
    session.once('close', () => {
      sessions.delete(session);
      if (stopped) return;
      if (ready) counts.closedByServer++;
      else counts.failedToOpen++;
      setTimeout(open, RECONNECT_MS);
    });
  };
  for (let i = 0; i < count; i++) open();
  return {
    counts,
    stop: () => {
      stopped = true;
      for (const session of sessions) session.destroy();
    },
  };
}

/** Opens one GenerateJwt stream on `session`, counted; `end` says whether the request is whole. */
function openStream(
  session: ClientHttp2Session,
  counts: AttackCounts,
  body: Buffer,
  end: boolean,
  headers: OutgoingHttpHeaders = REQUEST_HEADERS,
): ClientHttp2Stream | undefined {
  if (session.closed || session.destroyed) return undefined;
  let stream: ClientHttp2Stream;
  try {
    stream = session.request(headers, { endStream: false });
  } catch {
    return undefined;
  }
  counts.streams++;
  stream.on('error', () => {});
  stream.once('close', () => {
    if (stream.rstCode !== 0 && stream.rstCode !== undefined && !session.destroyed) counts.streamsRefused++;
  });
  if (end) stream.end(body);
  else stream.write(body);
  return stream;
}

/** Half a message: a prefix announcing 16 KiB, then 64 bytes of it. The rest never comes. */
const HALF_MESSAGE = Buffer.concat([Buffer.from([0, 0, 0, 0x40, 0]), Buffer.alloc(64, 0x41)]);

/**
 * A header the client's HPACK encoder indexes once and then sends as one byte per field: each
 * request repeats it {@link PAD_REPEATS} times, so that a stream whose header list the server
 * holds costs it about 14 KiB for a few dozen bytes on the wire.
 */
const PAD_FIELD = 'a'.repeat(900);
const PAD_REPEATS = 16;
/** Streams each large half-open connection opens per tick until one is refused; then one per tick. */
const HALF_OPEN_BURST = 200;
/**
 * The half-open attack's shape: a few large connections fill the process's stream memory,
 * and many small ones, each holding less than the share that lets a connection into the
 * readers' reserve (1/64 of the process ceiling), fill that reserve too.
 */
const HALF_OPEN_LARGE = 4;
/** Streams a small connection holds: about 3.7 MiB at about 19 KiB each (4 KiB a stream and its header list), under the 4 MiB share. */
const HALF_OPEN_SMALL_STREAMS = 200;

/**
 * Holds `count` sessions as {@link holdSessions} does, and on each runs the tick
 * `makeTick(session)` returns every {@link STREAM_EVERY_MS} until the session ends.
 */
function tickingSessions(
  target: AttackTarget,
  count: number,
  settings: { initialWindowSize?: number },
  makeTick: (session: ClientHttp2Session, counts: AttackCounts) => () => void,
): Attack {
  const counts = newCounts();
  const timers = new Set<NodeJS.Timeout>();
  const attack = holdSessions(
    target,
    count,
    settings,
    (session) => {
      const tick = makeTick(session, counts);
      const timer = setInterval(() => {
        if (session.destroyed) clearInterval(timer);
        else tick();
      }, STREAM_EVERY_MS);
      timers.add(timer);
    },
    counts,
  );
  return {
    counts,
    stop: () => {
      for (const timer of timers) clearInterval(timer);
      attack.stop();
    },
  };
}

function halfOpen(target: AttackTarget): Attack {
  const headers = { ...REQUEST_HEADERS, 'x-pad': Array.from({ length: PAD_REPEATS }, () => PAD_FIELD) };
  let sessionsSeen = 0;
  return tickingSessions(target, HALF_OPEN_CONNECTIONS, {}, (session, counts) => {
    const large = sessionsSeen++ % (HALF_OPEN_CONNECTIONS / HALF_OPEN_LARGE) === 0;
    let perTick = HALF_OPEN_BURST;
    let refusedSeen = counts.streamsRefused;
    let open = 0;
    return () => {
      // Refusals arrive between ticks: once the server refuses any, top up slower than it forgives.
      if (counts.streamsRefused > refusedSeen) perTick = 1;
      refusedSeen = counts.streamsRefused;
      const room = large ? perTick : Math.min(perTick, HALF_OPEN_SMALL_STREAMS - open);
      for (let i = 0; i < room; i++) {
        const stream = openStream(session, counts, HALF_MESSAGE, false, headers);
        if (stream === undefined) continue;
        open++;
        stream.once('close', () => open--);
      }
    };
  });
}

function idle(target: AttackTarget): Attack {
  return holdSessions(target, IDLE_CONNECTIONS, {}, () => {});
}

/** A whole GenerateJwt request, the answer to which a zero window keeps on the server. */
const WHOLE_REQUEST = grpcFrame(encodeGenerateJwtRequest('HS256', 'attacker'));

function window0(target: AttackTarget): Attack {
  return tickingSessions(target, WINDOW0_CONNECTIONS, { initialWindowSize: 0 }, (session, counts) => () => {
    for (let i = 0; i < 5; i++) openStream(session, counts, WHOLE_REQUEST, true)?.pause();
  });
}

/** Keeps `count` silent TCP sockets to `port`, each replaced after {@link SILENT_REPLACE_MS} (spread so that replacements are steady). */
function silentSockets(target: AttackTarget, port: number, count: number, counts: AttackCounts): () => void {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const nextAddress = sourceAddresses(target);
  let stopped = false;
  const open = (): void => {
    if (stopped) return;
    counts.opened++;
    const socket = connectTcp({ host: target.host, port, localAddress: nextAddress() });
    sockets.add(socket);
    let connected = false;
    let replaced = false;
    socket.on('error', () => {});
    // Read (nothing comes), so that the server's close is seen when it happens.
    socket.resume();
    socket.once('connect', () => {
      connected = true;
    });
    const openedAt = Date.now();
    const timer = setTimeout(() => {
      replaced = true;
      socket.destroy();
    }, SILENT_REPLACE_MS);
    timers.add(timer);
    socket.once('close', () => {
      clearTimeout(timer);
      timers.delete(timer);
      sockets.delete(socket);
      if (stopped) return;
      if (!connected) counts.failedToOpen++;
      else if (!replaced) counts.closedByServer++;
      // The next socket of this slot comes when the slot's 9 s are up, closed early or not: the rate (about 100 connects a second over the three ports).
      const next = setTimeout(open, Math.max(0, SILENT_REPLACE_MS - (Date.now() - openedAt)));
      timers.add(next);
    });
  };
  for (let i = 0; i < count; i++) {
    const timer = setTimeout(open, (SILENT_REPLACE_MS * i) / count);
    timers.add(timer);
  }
  return () => {
    stopped = true;
    for (const timer of timers) clearTimeout(timer);
    for (const socket of sockets) socket.destroy();
  };
}

function silent(target: AttackTarget): Attack {
  const counts = newCounts();
  const stops = [silentSockets(target, target.grpcPort, SILENT_PER_PORT.grpc, counts)];
  if (target.httpPort !== undefined) stops.push(silentSockets(target, target.httpPort, SILENT_PER_PORT.http, counts));
  if (target.metricsPort !== undefined) stops.push(silentSockets(target, target.metricsPort, SILENT_PER_PORT.metrics, counts));
  return { counts, stop: () => stops.forEach((stop) => stop()) };
}

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([header, payload]);
}

/** Frames a fuzzer would send: a valid start, then random types, flags, stream ids and bytes. */
function mutatedFrames(): Buffer {
  const parts = [PREFACE, frame(4, 0, 0, Buffer.alloc(0))];
  for (let i = 0; i < 8; i++) {
    const payload = Buffer.alloc(Math.floor(Math.random() * 64));
    for (let j = 0; j < payload.length; j++) payload[j] = Math.floor(Math.random() * 256);
    parts.push(frame(Math.floor(Math.random() * 10), Math.floor(Math.random() * 256), Math.floor(Math.random() * 16), payload));
  }
  return Buffer.concat(parts);
}

/** Parallel loops of short connections; each writes mutated frames and is gone within 100 ms. */
const CHURN_LOOPS = 4;
const CHURN_HOLD_MS = 100;

function churn(target: AttackTarget): Attack {
  const counts = newCounts();
  let stopped = false;
  const sockets = new Set<Socket>();
  const nextAddress = sourceAddresses(target);
  const loop = (): void => {
    if (stopped) return;
    counts.opened++;
    const socket = connectTcp({ host: target.host, port: target.grpcPort, localAddress: nextAddress() });
    sockets.add(socket);
    let closedByUs = false;
    socket.on('error', () => {});
    socket.once('connect', () => socket.write(mutatedFrames()));
    socket.on('data', () => {});
    const timer = setTimeout(() => {
      closedByUs = true;
      socket.destroy();
    }, CHURN_HOLD_MS);
    socket.once('close', () => {
      clearTimeout(timer);
      sockets.delete(socket);
      if (!closedByUs) counts.closedByServer++;
      setImmediate(loop);
    });
  };
  for (let i = 0; i < CHURN_LOOPS; i++) loop();
  return {
    counts,
    stop: () => {
      stopped = true;
      for (const socket of sockets) socket.destroy();
    },
  };
}

/** The gRPC status of an answered call: in the trailers, or in the headers of a Trailers-Only answer. */
function onGrpcStatus(stream: ClientHttp2Stream, onStatus: (status: string | undefined) => void): void {
  stream.once('response', (headers) => {
    if (headers['grpc-status'] !== undefined) onStatus(String(headers['grpc-status']));
  });
  stream.once('trailers', (trailers) => onStatus(trailers['grpc-status'] as string | undefined));
}

/** RESOURCE_EXHAUSTED: the policy's answer to a caller over its rate. */
const GRPC_RESOURCE_EXHAUSTED = '8';

function issuerFlood(target: AttackTarget): Attack {
  if (target.tls === undefined) throw new Error("issuer-flood calls over mutual TLS: the target needs the attacker's certificate (tls)");
  const body = grpcFrame(encodeGenerateJwtRequest('HS256', FLOOD_SUBJECT));
  const counts = newCounts();
  return holdSessions(
    target,
    FLOOD_CONNECTIONS,
    {},
    (session) => {
      const call = (): void => {
        const stream = openStream(session, counts, body, true);
        if (stream === undefined) return;
        stream.resume();
        onGrpcStatus(stream, (status) => {
          if (status === GRPC_RESOURCE_EXHAUSTED) counts.streamsRefused++;
        });
        // The next call as soon as this one is answered: as fast as the server goes.
        stream.once('close', () => setImmediate(call));
      };
      for (let i = 0; i < FLOOD_STREAMS; i++) call();
    },
    counts,
  );
}

/** Starts the attack named. */
export function startAttack(name: AttackName, target: AttackTarget): Attack {
  switch (name) {
    case 'half-open':
      return halfOpen(target);
    case 'idle':
      return idle(target);
    case 'silent':
      return silent(target);
    case 'window0':
      return window0(target);
    case 'churn':
      return churn(target);
    case 'issuer-flood':
      return issuerFlood(target);
  }
}
