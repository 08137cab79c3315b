/**
 * The Connect conformance suite's server under test (connectrpc.com/conformance,
 * docs/testing_servers.md): jwt-grpc's own transport serving ConformanceService. Reads one
 * size-prefixed ServerCompatRequest on stdin (protocol, HTTP version, TLS, client
 * certificate, message limit), listens on 127.0.0.1 on a free port and writes a
 * size-prefixed ServerCompatResponse (host, port, certificate) on stdout. SIGTERM closes it.
 *
 * `connectconformance --mode server` starts it once per server configuration it tests
 * (test/conformance/run.ts).
 */
import { Buffer } from 'node:buffer';
import { createStderrLogger, silentLogger } from '../../src/base/log.js';
import type { ServerTlsOptions } from '../../src/contracts/handler-api.js';
import { createHttp2GrpcServer } from '../../src/transport/http2/server.js';
import { conformanceImplementation, conformanceRoot, conformanceService } from './service.js';

interface ServerCompatRequest {
  useTls?: boolean;
  clientTlsCert?: Buffer;
  messageReceiveLimit?: number;
  serverCreds?: { cert?: Buffer; key?: Buffer };
}

const HOST = '127.0.0.1';

/** One size-prefixed message from stdin (a 4-byte big-endian length, then the message), without waiting for its end. */
async function readMessage(): Promise<Buffer> {
  let buffered = Buffer.alloc(0);
  for await (const chunk of process.stdin) {
    buffered = Buffer.concat([buffered, chunk as Buffer]);
    if (buffered.length >= 4 && buffered.length >= 4 + buffered.readUInt32BE(0)) break;
  }
  if (buffered.length < 4 || buffered.length < 4 + buffered.readUInt32BE(0))
    throw new Error('stdin ended before a whole ServerCompatRequest');
  return buffered.subarray(4, 4 + buffered.readUInt32BE(0));
}

/** A 4-byte big-endian length, then the message (the suite's framing). */
function sizePrefixed(message: Uint8Array): Buffer {
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32BE(message.length);
  return Buffer.concat([prefix, message]);
}

function tlsOptions(request: ServerCompatRequest): ServerTlsOptions | undefined {
  if (request.useTls !== true) return undefined;
  const { cert, key } = request.serverCreds ?? {};
  if (cert === undefined || key === undefined) throw new Error('use_tls without server_creds: nothing to listen with');
  const client = request.clientTlsCert;
  return client !== undefined && client.length > 0 ? { cert, key, ca: client, requireClientCertificate: true } : { cert, key };
}

const root = conformanceRoot();
const requestType = root.lookupType('connectrpc.conformance.v1.ServerCompatRequest');
const responseType = root.lookupType('connectrpc.conformance.v1.ServerCompatResponse');

const request = requestType.toObject(requestType.decode(await readMessage()), { bytes: Buffer, longs: Number }) as ServerCompatRequest;
const limit = request.messageReceiveLimit ?? 0;

const logger = process.env.CONFORMANCE_DEBUG === undefined ? silentLogger : createStderrLogger();
const server = createHttp2GrpcServer({ logger, ...(limit > 0 && { maxReceiveMessageBytes: limit }) });
server.addService(conformanceService(), conformanceImplementation());
const tls = tlsOptions(request);
const port = await server.listen(`${HOST}:0`, tls);
const response = { host: HOST, port, ...(tls !== undefined && { pemCert: tls.cert }) };
process.stdout.write(sizePrefixed(responseType.encode(responseType.fromObject(response)).finish()));
process.once('SIGTERM', () => void server.close({ graceMs: 0 }).then(() => process.exit(0)));
