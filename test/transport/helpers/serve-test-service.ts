/**
 * grpc.testing.TestService on jwt-grpc's own transport as a program of its own, so
 * that the interop tests can run the server on another runtime (Bun runs this file as it
 * is). Prints `listening on 127.0.0.1:PORT` once bound; with `--tls KEY CERT`, serves TLS.
 * SIGTERM closes it.
 *
 * Usage: bun serve-test-service.ts [--tls KEY_FILE CERT_FILE]
 */
import { readFileSync } from 'node:fs';
import { silentLogger } from '../../../src/base/log.js';
import { createHttp2GrpcServer } from '../../../src/transport/http2/server.js';
import { servedTestService, testServiceImplementation } from './test-service.js';

const tlsAt = process.argv.indexOf('--tls');
const tls =
  tlsAt === -1
    ? undefined
    : { key: readFileSync(process.argv[tlsAt + 1] as string), cert: readFileSync(process.argv[tlsAt + 2] as string) };

const server = createHttp2GrpcServer({ maxReceiveMessageBytes: 4 << 20, logger: silentLogger });
server.addService(servedTestService(), testServiceImplementation());
const port = await server.listen('127.0.0.1:0', tls);
process.stdout.write(`listening on 127.0.0.1:${port}\n`);
process.once('SIGTERM', () => void server.close({ graceMs: 0 }).then(() => process.exit(0)));
