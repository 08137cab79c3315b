// The framing probe (the `h2-frames-probe` server of the benchmark): this package's
// JwtService, the very handlers and codecs `jwt-grpc serve` runs, answered over HTTP/2
// framed in JavaScript on node:net instead of node:http2. It answers one question with a
// figure: how much of a call node:http2 costs. It is an instrument, not a transport
// (connection.ts says what it leaves out).
//
// Usage: node server.js --keys FILE [--subjects FILE] [--host H] [--port N]
import { createServer } from 'node:net';
import { loadKeys } from '../../../src/lib.js';
import { prepareJwtService } from '../../../src/service/add.js';
import { loadSubjects } from '../../../src/service/load-subjects.js';
import { resolveServiceOptions } from '../../../src/service/options.js';
import { percentEncode } from '../../../src/transport/http2/protocol.js';
import { type CallContext, GrpcStatusError, type MethodDefinition, Status, type UnaryHandler } from '../../../src/transport/service.js';
import { failure, parsePeerCommandLine } from '../node-peer.js';
import { H2Connection } from './connection.js';

const fail: (message: string) => never = failure('h2-frames probe');
const { host, port, keys: keysFile, subjects: subjectsFile } = parsePeerCommandLine(fail);
if (keysFile === undefined) fail('--keys is required');

/** An HPACK literal field without indexing, new name (RFC 7541 §6.2.2), no Huffman coding. */
function literal(name: string, value: string): Buffer {
  const integer = (n: number): number[] => {
    if (n < 127) return [n];
    const bytes = [127];
    for (n -= 127; n >= 128; n >>>= 7) bytes.push((n & 0x7f) | 0x80);
    return [...bytes, n];
  };
  return Buffer.concat([Buffer.from([0, ...integer(name.length)]), Buffer.from(name, 'latin1'), Buffer.from(integer(Buffer.byteLength(value))), Buffer.from(value)]);
}

// `:status: 200` is static index 8 (0x88); content-type is a literal of static name 31.
const RESPONSE_HEADERS = Buffer.concat([Buffer.from([0x88, 0x0f, 0x10, 16]), Buffer.from('application/grpc')]);
const OK_TRAILERS = literal('grpc-status', '0');

function trailersOnly(status: number, message: string): Buffer {
  return Buffer.concat([RESPONSE_HEADERS, literal('grpc-status', String(status)), literal('grpc-message', percentEncode(message))]);
}

interface Route {
  readonly definition: MethodDefinition<unknown, unknown>;
  readonly handler: UnaryHandler<unknown, unknown>;
}

const keys = await loadKeys(keysFile as string);
const subjects = subjectsFile === undefined ? [] : await loadSubjects(subjectsFile);
const { service } = prepareJwtService(resolveServiceOptions({ subjects }), keys);
const routes = new Map<string, Route>(
  Object.entries(service.definition).map(([name, definition]) => [definition.path, { definition, handler: service.implementation[name] as UnaryHandler<unknown, unknown> }]),
);
// JwtService's handlers read nothing of the call.
const NO_CONTEXT = {} as CallContext;

function fault(connection: H2Connection, streamId: number, err: unknown): void {
  const status = err instanceof GrpcStatusError ? err.status : Status.INTERNAL;
  connection.respondTrailersOnly(streamId, trailersOnly(status, err instanceof GrpcStatusError ? err.details : 'internal error'));
}

/** The checks of the gRPC over HTTP/2 protocol document that every call pays, then the handler. */
function onRequest(connection: H2Connection, streamId: number, headers: Record<string, string>, body: Buffer): void {
  const route = routes.get(headers[':path'] as string);
  if (headers[':method'] !== 'POST' || !headers['content-type']?.startsWith('application/grpc') || headers.te !== 'trailers') {
    return connection.respondTrailersOnly(streamId, trailersOnly(Status.INTERNAL, 'not a gRPC request'));
  }
  if (route === undefined) return connection.respondTrailersOnly(streamId, trailersOnly(Status.UNIMPLEMENTED, `unknown method ${headers[':path']}`));
  if (body.length < 5 || body[0] !== 0 || body.readUInt32BE(1) !== body.length - 5) {
    return connection.respondTrailersOnly(streamId, trailersOnly(Status.INTERNAL, 'the probe takes one uncompressed message'));
  }
  try {
    const result = route.handler(route.definition.requestDeserialize(body.subarray(5)), NO_CONTEXT);
    const answer = (response: unknown): void => connection.respond(streamId, RESPONSE_HEADERS, route.definition.responseSerialize(response), OK_TRAILERS);
    if (result instanceof Promise) result.then(answer, (err: unknown) => fault(connection, streamId, err));
    else answer(result);
  } catch (err) {
    fault(connection, streamId, err);
  }
}

const server = createServer((socket) => new H2Connection(socket, onRequest));
server.on('error', (err) => fail(err.message));
server.listen(port, host, () => {
  const address = server.address();
  process.stdout.write(`listening on ${host}:${typeof address === 'object' && address !== null ? address.port : port}\n`);
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
