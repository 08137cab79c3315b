// The benchmark's `jwt-grpc-nginx` row as one server: NODEMAXPROCS=N `jwt-grpc serve`
// replicas (one process each) sharing the key file, behind nginx running the shipped
// deploy/nginx/jwt-grpc.conf, its gRPC part (bench/harness/fleet.ts; no discovery, so tokens
// carry no iss, as in the other rows). The harness measures, pauses and
// stops this process's whole tree (replicas and nginx) as one server, pinned to the CPUs
// it pins this process to, which its children inherit.
//
// Usage: NODEMAXPROCS=N node server.js --host 127.0.0.1 --port 0 --keys FILE --subjects FILE
//          [--node-flag=FLAG ...] [-- SERVE_FLAGS...]
//   Every replica runs `serve --host 127.0.0.1 --port 0 --keys FILE --subjects FILE
//   SERVE_FLAGS` on node with the FLAGs; nginx listens on a free loopback port, printed as
//   `listening on 127.0.0.1:PORT` (the peers' contract: only --port 0 is accepted).
import { parseArgs } from 'node:util';
import { startFleet } from '../../harness/fleet.js';

function fail(message: string): never {
  process.stderr.write(`nginx-fleet: ${message}\n`);
  process.exit(2);
}

const { values, positionals } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '0' },
    keys: { type: 'string' },
    subjects: { type: 'string' },
    'node-flag': { type: 'string', multiple: true },
  },
  allowPositionals: true,
});
const replicas = Number(process.env.NODEMAXPROCS ?? '1');
if (!Number.isInteger(replicas) || replicas < 1)
  fail(`NODEMAXPROCS must be a positive integer (the replica count), got ${JSON.stringify(process.env.NODEMAXPROCS)}`);
if (values.host !== '127.0.0.1' || values.port !== '0') fail('only --host 127.0.0.1 --port 0 is supported');
if (values.keys === undefined) fail('--keys FILE is required');

try {
  const fleet = await startFleet({
    replicas,
    keysFile: values.keys,
    serveArgs: [...(values.subjects === undefined ? [] : ['--subjects', values.subjects]), ...positionals],
    nodeArgs: values['node-flag'] ?? [],
  });
  const stop = (): void => {
    void fleet.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.stdout.write(`replicas on ${fleet.replicas.map((r) => r.port).join(', ')}\n`);
  process.stdout.write(`listening on 127.0.0.1:${fleet.nginx.port}\n`);
} catch (error) {
  process.stderr.write(`nginx-fleet: ${(error as Error).message}\n`);
  process.exit(1);
}
