/**
 * Nothing held for ever after the handshake (src/base/peer-deadlines.ts): on each
 * transport, through createJwtServer and over real connections on loopback, a request that
 * is not whole within requestTimeoutMs is answered DEADLINE_EXCEEDED and its stream reset,
 * releasing its memory charge; a connection with no open stream for maxConnectionIdleMs gets
 * GOAWAY NO_ERROR and closes (PINGs are not activity) while one with an open stream stays; a
 * connection past maxConnectionAgeMs gets GOAWAY and its call in flight still finishes; the
 * advertised SETTINGS_MAX_CONCURRENT_STREAMS is enforced. Each close is counted and logged.
 * The bounds are short here so each test takes seconds.
 */
import type { ClientHttp2Session } from 'node:http2';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type JwtServerOptions, type KeySet, type Transport, createJwtServer } from '../../src/lib/index.js';
import { PROCESS_MEMORY } from '../../src/transport/http2/wire/process-memory.js';
import { MAX_CONCURRENT_STREAMS } from '../../src/options/table.js';
import { GrpcStatus } from '../../src/contracts/handler-api.js';
import { TRANSPORTS, closeAllServers, recordingLogger, sharedKeys, trackServer } from '../../bench/kit/jwt-servers.js';
import {
  FRAME_FLAG,
  FRAME_TYPE,
  FrameConnection,
  frame,
  grpcHeaders,
  h2Frame,
  rawRequest,
  rawSession,
  requestBlock,
} from '../transport/helpers/raw.js';
import { errorCode } from '../transport/helpers/frame-exchange.js';
import { serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';

const CHECK = '/grpc.health.v1.Health/Check';
const WATCH = '/grpc.health.v1.Health/Watch';
/** An empty HealthCheckRequest: the server's overall health. */
const EMPTY = frame(Buffer.alloc(0));
/** The deadlines' checks may close up to a quarter past the bound; the machine is shared. */
const SLACK_MS = 1500;
const REFUSED_STREAM = 0x7;
const PROTOCOL_ERROR = 0x1;

let keys: KeySet;
const sessions = new Set<ClientHttp2Session>();
const connections = new Set<FrameConnection>();

beforeAll(async () => {
  keys = await sharedKeys();
});

afterEach(async () => {
  for (const session of sessions) session.destroy();
  sessions.clear();
  for (const conn of connections) conn.close();
  connections.clear();
  await closeAllServers();
  await killAll();
});

afterAll(() => closeAllServers());

async function start(transport: Transport, options: JwtServerOptions) {
  const logger = recordingLogger();
  const server = trackServer(createJwtServer({ transport, keys, logger, metricsPort: 0, ...options }));
  const port = await server.listen('127.0.0.1:0');
  return { server, port, logger, metricsPort: server.metricsPort as number };
}

/** A Health/Check opened without END_STREAM; `finish` sends its message and END_STREAM and resolves with its grpc-status. */
function openCheck(client: ClientHttp2Session): { finish(): Promise<string | undefined> } {
  const stream = client.request(grpcHeaders(CHECK), { endStream: false });
  stream.on('error', () => {});
  let status: string | undefined;
  stream.on('trailers', (trailers) => (status = String(trailers['grpc-status'])));
  stream.on('response', (headers) => (status ??= headers['grpc-status'] as string | undefined));
  stream.resume();
  const closed = new Promise((resolve) => stream.once('close', resolve));
  return {
    async finish() {
      stream.end(EMPTY);
      await closed;
      return status;
    },
  };
}

async function session(port: number): Promise<ClientHttp2Session> {
  const opened = await rawSession(port);
  sessions.add(opened);
  return opened;
}

/** The value of one sample of `/metrics` (`labels` as written between the braces, '' for none), 0 when absent. */
async function sample(metricsPort: number, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const prefix = labels === '' ? `${name} ` : `${name}{${labels}} `;
  const line = text.split('\n').find((candidate) => candidate.startsWith(prefix));
  return line === undefined ? 0 : Number(line.slice(prefix.length));
}

/** Resolves with the GOAWAY's code, last stream and debug data, and the ms since `since`. */
function nextGoaway(client: ClientHttp2Session, since: number): Promise<{ code: number; last: number; data: string; atMs: number }> {
  return new Promise((resolve) => {
    client.once('goaway', (code, last, data) => resolve({ code, last, data: data?.toString() ?? '', atMs: Date.now() - since }));
  });
}

const closed = (client: ClientHttp2Session): Promise<void> =>
  new Promise((resolve) => (client.destroyed ? resolve() : client.once('close', () => resolve())));

describe.each(TRANSPORTS)('on transport %s', (transport) => {
  it('answers a half-open stream DEADLINE_EXCEEDED within requestTimeoutMs, whatever its grpc-timeout, and releases it; other calls are served', async () => {
    const { port, logger, metricsPort } = await start(transport, { requestTimeoutMs: 500 });
    const client = await session(port);
    const startedAt = Date.now();
    // HEADERS without END_STREAM and no DATA: the stream an attacker holds for its memory charge.
    const bare = rawRequest(client, { headers: grpcHeaders(CHECK), end: false });
    const withTimeout = rawRequest(client, { headers: grpcHeaders(CHECK, { 'grpc-timeout': '60S' }), end: false });
    const legit = await rawRequest(await session(port), { headers: grpcHeaders(CHECK), chunks: [EMPTY] });
    expect(legit.status).toBe(GrpcStatus.OK);
    for (const answer of await Promise.all([bare, withTimeout])) {
      expect(answer.status).toBe(GrpcStatus.DEADLINE_EXCEEDED);
      expect(answer.message).toMatch(/not complete .*within 500 ms \(requestTimeoutMs\)/);
    }
    const elapsed = Date.now() - startedAt;
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(500 * 1.25 + SLACK_MS);
    await expect.poll(() => PROCESS_MEMORY.held).toBe(0);
    expect(await sample(metricsPort, 'jwt_grpc_request_timeouts_total')).toBe(2);
    expect(logger.lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: expect.stringMatching(/request was not whole/),
        fields: expect.objectContaining({ requestTimeoutMs: 500 }),
      }),
    );
    // The connection lives on: a whole call on it is served.
    expect((await rawRequest(client, { headers: grpcHeaders(CHECK), chunks: [EMPTY] })).status).toBe(GrpcStatus.OK);
  });

  it('serves a request whose END_STREAM comes late but within requestTimeoutMs', async () => {
    const { port } = await start(transport, { requestTimeoutMs: 1000 });
    const client = await session(port);
    const check = openCheck(client);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await check.finish()).toBe(String(GrpcStatus.OK));
  });

  it('sends GOAWAY NO_ERROR to a connection idle for maxConnectionIdleMs (pings do not count), not to one with an open stream', async () => {
    const { port, logger, metricsPort } = await start(transport, { maxConnectionIdleMs: 1000 });
    const idle = await session(port);
    const busy = await session(port);
    expect((await rawRequest(idle, { headers: grpcHeaders(CHECK), chunks: [EMPTY] })).status).toBe(GrpcStatus.OK);
    const idleSince = Date.now();
    const goaway = nextGoaway(idle, idleSince);
    // A Watch stays open: its connection is not idle however long it lasts.
    const watch = busy.request(grpcHeaders(WATCH), { endStream: false });
    watch.on('error', () => {});
    watch.end(EMPTY);
    let busyGoaway = false;
    busy.on('goaway', () => (busyGoaway = true));
    // Two pings (within the tolerated strikes) while idle: no activity.
    for (const delay of [300, 300]) {
      await new Promise((resolve) => setTimeout(resolve, delay));
      idle.ping(() => {});
    }
    const { code, data, atMs } = await goaway;
    expect(code).toBe(0);
    expect(data).toBe('max_idle');
    expect(atMs).toBeGreaterThanOrEqual(950);
    expect(atMs).toBeLessThan(1000 * 1.25 + SLACK_MS);
    await closed(idle);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(busyGoaway).toBe(false);
    expect(busy.destroyed).toBe(false);
    expect(await sample(metricsPort, 'jwt_grpc_connections_closed_total', 'reason="idle",http_version="h2"')).toBe(1);
    expect(logger.lines).toContainEqual(expect.objectContaining({ level: 'info', fields: expect.objectContaining({ idle: 1 }) }));
  });

  it('sends GOAWAY to a connection past maxConnectionAgeMs, and its call in flight still finishes', async () => {
    const { port, metricsPort } = await start(transport, { maxConnectionAgeMs: 1000, requestTimeoutMs: 5000 });
    const client = await session(port);
    const connectedAt = Date.now();
    const goaway = nextGoaway(client, connectedAt);
    // In flight across the age: its request is finished only after the GOAWAY.
    const check = openCheck(client);
    const { code, data, atMs } = await goaway;
    expect(code).toBe(0);
    expect(data).toBe('max_age');
    expect(atMs).toBeGreaterThanOrEqual(850);
    expect(atMs).toBeLessThan(1100 + SLACK_MS);
    expect(await check.finish()).toBe(String(GrpcStatus.OK));
    await closed(client);
    expect(await sample(metricsPort, 'jwt_grpc_connections_closed_total', 'reason="age",http_version="h2"')).toBe(1);
  });

  it('advertises SETTINGS_MAX_CONCURRENT_STREAMS and refuses the stream past it (RFC 9113 §5.1.2)', async () => {
    const { port } = await start(transport, {});
    const conn = await FrameConnection.open(port);
    connections.add(conn);
    const settings = await conn.waitFor((f) => f.type === FRAME_TYPE.SETTINGS && (f.flags & FRAME_FLAG.ACK) === 0);
    const advertised = new Map<number, number>();
    for (let at = 0; at + 6 <= settings.payload.length; at += 6)
      advertised.set(settings.payload.readUInt16BE(at), settings.payload.readUInt32BE(at + 2));
    expect(advertised.get(0x3)).toBe(MAX_CONCURRENT_STREAMS);
    // As many half-open streams as advertised, then one more.
    const block = requestBlock(CHECK);
    const frames: Buffer[] = [];
    for (let i = 0; i <= MAX_CONCURRENT_STREAMS; i++) frames.push(h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, 2 * i + 1, block));
    conn.send(...frames);
    const over = 2 * MAX_CONCURRENT_STREAMS + 1;
    const answer = await conn.waitFor(
      (f) => (f.type === FRAME_TYPE.RST_STREAM && f.streamId === over) || f.type === FRAME_TYPE.GOAWAY,
      5000,
    );
    // §5.1.2: a stream error, PROTOCOL_ERROR or REFUSED_STREAM (the latter tells the client to
    // retry). nghttp2 (node:http2, so grpc-js) is stricter once its SETTINGS are acknowledged:
    // GOAWAY PROTOCOL_ERROR, whose last stream id still names every stream within the limit.
    expect([REFUSED_STREAM, PROTOCOL_ERROR]).toContain(errorCode(answer));
    if (answer.type === FRAME_TYPE.GOAWAY) expect(answer.payload.readUInt32BE(0) & 0x7fffffff).toBe(over - 2);
    // None of the streams within the limit was refused.
    expect(conn.frames.filter((f) => f.type === FRAME_TYPE.RST_STREAM && f.streamId < over)).toEqual([]);
  });
});

describe('`jwt-grpc serve` in a cluster of 2 workers', () => {
  it('gives the flags to every worker: half-open streams answered, idle connections closed, counted by the primary', async () => {
    const cli = await startCli(serveArgs('--request-timeout-ms', '500', '--max-connection-idle-ms', '1000', '--metrics-port', '0'), {
      env: { NODEMAXPROCS: '2' },
    });
    const metricsPort = Number(/metrics: http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(cli.stdout)?.[1]);
    // Connections go round robin: four reach both workers.
    const clients = await Promise.all(Array.from({ length: 4 }, () => session(cli.port)));
    const answers = await Promise.all(clients.map((client) => rawRequest(client, { headers: grpcHeaders(CHECK), end: false })));
    for (const answer of answers) expect(answer.status).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    const goaways = await Promise.all(clients.map((client) => nextGoaway(client, Date.now())));
    for (const goaway of goaways) expect(goaway).toMatchObject({ code: 0, data: 'max_idle' });
    await expect.poll(() => sample(metricsPort, 'jwt_grpc_request_timeouts_total'), { timeout: 5000 }).toBe(4);
    await expect
      .poll(() => sample(metricsPort, 'jwt_grpc_connections_closed_total', 'reason="idle",http_version="h2"'), { timeout: 5000 })
      .toBe(4);
    await cli.waitFor('stderr', /calls answered DEADLINE_EXCEEDED: their request was not whole in time/, 5000);
  }, 30_000);
});
