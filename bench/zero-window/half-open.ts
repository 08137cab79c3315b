/**
 * Streams held open by a peer with nothing but TCP: attacker connections that every 200 ms
 * open a batch of streams with HEADERS only (no END_STREAM, no DATA, no grpc-timeout, a
 * padded header list), never finishing one, and reconnect when closed; beside them a
 * legitimate client calls Health/Check in a loop, on one connection and on a fresh one each
 * second. Prints the legitimate calls' success rate, what the attack got held (peak charged
 * against the memory ceilings) and the server's deadline counters. Server (createJwtServer)
 * and clients share the process. Run: `npm run bench:half-open`
 * (`-- --transport grpc-js --connections 22 --seconds 30 --request-timeout-ms 10000`).
 */
import { type Socket, connect } from 'node:net';
import { parseArgs } from 'node:util';
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import { createJwtServer, silentLogger, type Transport } from '../../src/lib.js';
import { frame } from '../../src/transport/http2/wire/frames.js';
import { PROCESS_MEMORY } from '../../src/transport/http2/wire/process-memory.js';
import { sharedKeys } from '../kit/jwt-servers.js';
import { sleep } from '../kit/wait.js';

const { values } = parseArgs({
  options: {
    transport: { type: 'string', default: 'http2' },
    connections: { type: 'string', default: '22' },
    seconds: { type: 'string', default: '30' },
    batch: { type: 'string', default: '20' },
    'pad-bytes': { type: 'string', default: '8000' },
    'request-timeout-ms': { type: 'string' },
  },
});
const transport = values.transport as Transport;
const connections = Number(values.connections);
const seconds = Number(values.seconds);
const batch = Number(values.batch);
const pad = 'x'.repeat(Number(values['pad-bytes']));
const CHECK = '/grpc.health.v1.Health/Check';

const server = createJwtServer({
  transport,
  keys: await sharedKeys(),
  logger: silentLogger,
  metricsPort: 0,
  ...(values['request-timeout-ms'] !== undefined && { requestTimeoutMs: Number(values['request-timeout-ms']) }),
});
const port = await server.listen('127.0.0.1:0');

/** An HPACK literal without indexing (RFC 7541 §6.2.2), lengths as 7-bit prefixed integers. */
function literal(name: string, value: string): Buffer {
  const length = (n: number): Buffer => {
    if (n < 127) return Buffer.from([n]);
    const bytes = [127];
    for (n -= 127; n >= 128; n >>= 7) bytes.push((n & 127) | 128);
    bytes.push(n);
    return Buffer.from(bytes);
  };
  return Buffer.concat([Buffer.from([0]), length(name.length), Buffer.from(name), length(value.length), Buffer.from(value)]);
}
const block = Buffer.concat([
  Buffer.from([0x83, 0x86]),
  literal(':path', CHECK),
  literal(':authority', 'localhost'),
  literal('content-type', 'application/grpc'),
  literal('te', 'trailers'),
  literal('x-pad', pad),
]);

const attack = { streams: 0, refused: 0, goaways: 0, reconnects: 0 };
let running = true;

/** One attacker connection: batches of half-open streams every 200 ms until closed; then a new connection. */
async function attacker(): Promise<void> {
  while (running) {
    const socket: Socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    await new Promise((resolve) => {
      socket.once('connect', resolve);
      socket.once('close', resolve);
    });
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 9 && pending.length >= 9 + pending.readUIntBE(0, 3)) {
        const type = pending[3];
        if (type === 4 && ((pending[4] as number) & 1) === 0) socket.write(frame(4, 1, 0, Buffer.alloc(0)));
        if (type === 3) attack.refused++;
        if (type === 7) attack.goaways++;
        pending = pending.subarray(9 + pending.readUIntBE(0, 3));
      }
    });
    socket.write(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), frame(4, 0, 0, Buffer.alloc(0))]));
    let id = 1;
    while (running && !socket.destroyed && id < 2 ** 31 - 2 * batch) {
      const frames: Buffer[] = [];
      for (let i = 0; i < batch; i++, id += 2) frames.push(frame(1, 4, id, block));
      attack.streams += batch;
      socket.write(Buffer.concat(frames));
      await sleep(200);
    }
    socket.destroy();
    if (running) attack.reconnects++;
  }
}

const legit = { ok: 0, failed: 0, codes: new Map<string, number>() };

function check(session: ClientHttp2Session): Promise<void> {
  return new Promise((resolve) => {
    const stream = session.request({ ':method': 'POST', ':path': CHECK, 'content-type': 'application/grpc', te: 'trailers' });
    let status: string | undefined;
    stream.on('response', (headers) => (status = headers['grpc-status'] as string | undefined));
    stream.on('trailers', (trailers) => (status = trailers['grpc-status'] as string | undefined));
    stream.on('error', () => {});
    stream.setTimeout(5000, () => stream.close());
    stream.resume();
    stream.on('close', () => {
      if (status === '0') legit.ok++;
      else {
        legit.failed++;
        const code = status === undefined ? `RST_STREAM ${stream.rstCode}` : `grpc-status ${status}`;
        legit.codes.set(code, (legit.codes.get(code) ?? 0) + 1);
      }
      resolve();
    });
    stream.end(Buffer.alloc(5));
  });
}

function session(): ClientHttp2Session {
  const opened = http2Connect(`http://127.0.0.1:${port}`);
  opened.on('error', () => {});
  return opened;
}

/** Calls in a loop on one connection (reconnecting when it is lost), and on a fresh connection each second. */
async function legitimate(): Promise<void> {
  let kept = session();
  let lastFresh = 0;
  while (running) {
    if (kept.destroyed || kept.closed) kept = session();
    await check(kept);
    if (performance.now() - lastFresh > 1000) {
      lastFresh = performance.now();
      const fresh = session();
      await check(fresh);
      fresh.close();
    }
    await sleep(10);
  }
  kept.close();
}

let peak = 0;
const sampler = setInterval(() => (peak = Math.max(peak, PROCESS_MEMORY.held)), 50);
const legitDone = legitimate();
const attackers = Array.from({ length: connections }, () => attacker());
await sleep(seconds * 1000);
running = false;
await Promise.all([legitDone, ...attackers]);
clearInterval(sampler);
const metrics = await (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text();
const counter = (name: string): string =>
  metrics
    .split('\n')
    .filter((line) => line.startsWith(name))
    .map((line) => line.replace(/^jwt_grpc_/, ''))
    .join(', ');
const total = legit.ok + legit.failed;
console.log(
  `transport ${transport}, ${connections} attacker connection(s), ${batch} half-open streams each every 200 ms (${values['pad-bytes']}-byte header), ${seconds} s`,
);
console.log(
  `legitimate calls: ${legit.ok}/${total} OK (${((100 * legit.ok) / Math.max(1, total)).toFixed(2)} %)${legit.failed > 0 ? `; failed: ${[...legit.codes].map(([code, n]) => `${code} x${n}`).join(', ')}` : ''}`,
);
console.log(
  `attack: ${attack.streams} streams sent, ${attack.refused} reset or refused, ${attack.goaways} GOAWAY, ${attack.reconnects} reconnects; peak charged ${(peak / 2 ** 20).toFixed(1)} MiB`,
);
console.log(`${counter('jwt_grpc_request_timeouts_total')}; ${counter('jwt_grpc_connections_closed_total')}`);
// Not awaited: once the clients are gone nothing keeps the process alive for the close to finish.
void server.close({ graceMs: 0 });
