/**
 * What a client that never reads its answers costs a server (issue 33, CVE-2019-9517's
 * class): bare TCP connections that set SETTINGS_INITIAL_WINDOW_SIZE to 0, never send
 * WINDOW_UPDATE, and open unary calls as fast as the server takes them. Each answer is
 * encoded and waits for window that never comes. Prints the server's memory (V8 heap and
 * external after full GCs, and RSS) before and after, the peak RSS and the peak charged
 * against the memory ceilings while they run, the calls accepted and refused, and the cost
 * per accepted call. Server and clients share the process; the clients hold only
 * the few frames they receive. Run: `npm run bench:zero-window-memory`
 * (`-- --transport grpc-js --connections 6 --calls 20000`).
 */
import { type Socket, connect } from 'node:net';
import { parseArgs } from 'node:util';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import type { Logger } from '../../src/base/log.js';
import { applyHttp2ServerOptions, grpcJsMemoryLimits, serverChannelOptions } from '../../src/server/channel-options.js';
import { guardGrpcJsMemory } from '../../src/server/grpc-js-memory.js';
import { resolveOptions } from '../../src/options/resolve.js';
import { addServiceToGrpcJs } from '../../src/transport/grpc-js.js';
import { frame } from '../../src/transport/http2/wire/frames.js';
import { PROCESS_MEMORY } from '../../src/transport/http2/wire/process-memory.js';
import { createHttp2GrpcServer } from '../../src/transport/http2/server.js';
import type { MethodDescriptor, ServiceDescriptor } from '../../src/contracts/handler-api.js';
import { sleep } from '../kit/wait.js';

const { values } = parseArgs({
  options: {
    transport: { type: 'string', default: 'http2' },
    connections: { type: 'string', default: '1' },
    calls: { type: 'string', default: '20000' },
    'settle-ms': { type: 'string', default: '2000' },
  },
});
const connections = Number(values.connections);
const calls = Number(values.calls);
const settleMs = Number(values['settle-ms']);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc (npm run bench:zero-window-memory does)');

const quiet: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
const echo: MethodDescriptor<unknown, unknown> = {
  path: '/bench.Echo/Unary',
  requestStream: false,
  responseStream: false,
  requestSerialize: (value) => value as Buffer,
  requestDeserialize: (bytes) => bytes,
  responseSerialize: (value) => value as Buffer,
  responseDeserialize: (bytes) => bytes,
};
const service: ServiceDescriptor = { Unary: echo };
const implementation = { Unary: (request: unknown) => request };

/** SETTINGS_MAX_CONCURRENT_STREAMS at its largest: 20,000 calls on one connection pass the default 1,024. */
const UNLIMITED_STREAMS = 2 ** 32 - 1;

function memory(): { heap: number; committed: number; rss: number } {
  gc?.();
  gc?.();
  const usage = process.memoryUsage();
  return { heap: usage.heapUsed + usage.external, committed: usage.heapTotal + usage.external, rss: usage.rss };
}

async function start(): Promise<{ port: number; close: () => Promise<void> }> {
  if (values.transport === 'grpc-js') {
    // As createJwtServer sets up its grpc-js transport (src/server/transports.ts).
    const options = resolveOptions('transport', {});
    // The stream limit lifted (as on the own transport below): what is measured is what held calls cost, up to the memory ceilings.
    const server = new Server({ ...serverChannelOptions(options), 'grpc.max_concurrent_streams': UNLIMITED_STREAMS });
    applyHttp2ServerOptions(server);
    guardGrpcJsMemory(server, grpcJsMemoryLimits(options));
    addServiceToGrpcJs(server, service, implementation, { logger: quiet });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, bound) => (err === null ? resolve(bound) : reject(err))),
    );
    return { port, close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())).then(() => server.forceShutdown()) };
  }
  const server = createHttp2GrpcServer({ logger: quiet, maxConcurrentStreams: UNLIMITED_STREAMS });
  server.addService(service, implementation);
  const port = await server.listen('127.0.0.1:0');
  return { port, close: () => server.close({ graceMs: 0 }) };
}

const literal = (name: string, value: string): Buffer =>
  Buffer.concat([Buffer.from([0, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)]);
const block = Buffer.concat([
  Buffer.from([0x83, 0x86, 0x04, echo.path.length]),
  Buffer.from(echo.path),
  literal(':authority', 'localhost'),
  literal('content-type', 'application/grpc'),
  literal('te', 'trailers'),
]);
/** A 100-byte request message, length-prefixed. */
const message = Buffer.concat([Buffer.from([0, 0, 0, 0, 100]), Buffer.alloc(100, 0x61)]);

interface Tally {
  /** Calls sent before the first refusal. */
  accepted: number;
  refused: number;
  goaway: boolean;
  closed: boolean;
}

/** One client that grants no window: SETTINGS_INITIAL_WINDOW_SIZE 0, then up to `calls` unary calls in batches of 100. */
async function zeroWindowClient(port: number, tally: Tally): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.on('error', () => {});
  socket.on('close', () => (tally.closed = true));
  let pending = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 9 && pending.length >= 9 + pending.readUIntBE(0, 3)) {
      const type = pending[3];
      const flags = pending[4] as number;
      if (type === 4 && (flags & 1) === 0) socket.write(frame(4, 1, 0, Buffer.alloc(0)));
      if (type === 3) tally.refused++;
      if (type === 7) tally.goaway = true;
      pending = pending.subarray(9 + pending.readUIntBE(0, 3));
    }
  });
  const zeroWindow = Buffer.from([0, 4, 0, 0, 0, 0]);
  socket.write(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), frame(4, 0, 0, zeroWindow)]));
  // Stops at the first refusal, as a client that means to hold the most would: past it,
  // refusals only spend the server's refused-stream budget and get the connection closed.
  for (let sent = 0; sent < calls && !tally.closed && tally.refused === 0; sent += 100) {
    const frames: Buffer[] = [];
    for (let i = sent; i < Math.min(calls, sent + 100); i++) {
      frames.push(frame(1, 4, 2 * i + 1, block), frame(0, 1, 2 * i + 1, message));
    }
    tally.accepted += frames.length / 2;
    if (!socket.write(Buffer.concat(frames)))
      await new Promise((resolve) => {
        socket.once('drain', resolve);
        socket.once('close', resolve);
      });
    await new Promise((resolve) => setImmediate(resolve));
  }
  return socket;
}

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

const server = await start();
const before = memory();
const started = performance.now();
/** Peaks while the clients run: they may lose their connections (refused-stream budget), releasing what was held before the end. */
const peak = { rss: 0, charged: 0 };
const sampler = setInterval(() => {
  peak.rss = Math.max(peak.rss, process.memoryUsage.rss());
  peak.charged = Math.max(peak.charged, PROCESS_MEMORY.held);
}, 20);
const tallies = Array.from({ length: connections }, (): Tally => ({ accepted: 0, refused: 0, goaway: false, closed: false }));
const sockets = await Promise.all(tallies.map((tally) => zeroWindowClient(server.port, tally)));
await sleep(settleMs);
clearInterval(sampler);
const after = memory();
const refused = tallies.reduce((sum, t) => sum + t.refused, 0);
const accepted = tallies.reduce((sum, t) => sum + t.accepted, 0);
console.log(
  `transport ${values.transport}, ${connections} connection(s) x ${calls} unary calls, window 0, after ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
console.log(
  `refused or reset: ${refused}; GOAWAY on ${tallies.filter((t) => t.goaway).length}, closed: ${tallies.filter((t) => t.closed).length}`,
);
console.log(
  `heap+external: ${mib(before.heap)} -> ${mib(after.heap)} (+${mib(after.heap - before.heap)}); rss ${mib(before.rss)} -> ${mib(after.rss)}`,
);
console.log(
  `peak rss: +${mib(peak.rss - before.rss)} (${mib(peak.rss)}); peak charged against the ceilings: ${mib(peak.charged)}, at the end ${mib(PROCESS_MEMORY.held)}`,
);
console.log(`heap committed+external: ${mib(before.committed)} -> ${mib(after.committed)} (+${mib(after.committed - before.committed)})`);
console.log(
  `per connection: +${mib((after.heap - before.heap) / connections)}; per call held: ${accepted > 0 ? ((after.heap - before.heap) / accepted).toFixed(0) : '-'} bytes used, ${accepted > 0 ? ((after.rss - before.rss) / accepted).toFixed(0) : '-'} bytes RSS (upper bound: counts every call sent before the first refusal)`,
);
for (const socket of sockets) socket.destroy();
await server.close();
