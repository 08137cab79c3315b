// The benchmark's protected rows as one server: a jwt-grpc issuer (`jwt-grpc serve` on the
// bench's key file) and the protected Greeter (server.ts) checking each call's token
// against it, locally (`--verify local`) or with one VerifyJwt call per call (`--verify
// rpc`). The harness measures, pauses and stops this process's whole tree as one server,
// pinned to the CPUs it pins this process to, which the children inherit: the CPU per call
// is what authenticating costs the two processes together, wherever the work lands.
//
// Usage: node with-issuer.js --verify local|rpc --host 127.0.0.1 --port 0 --keys FILE [--subjects FILE]
//   Prints the Greeter's `listening on 127.0.0.1:PORT` (the peers' contract: only --port 0).
import { parseArgs } from 'node:util';
import { CLI_ENTRY } from '../../kit/cli.js';
import { type ServerProcess, startServer } from '../../kit/launcher.js';

function fail(message: string): never {
  process.stderr.write(`protected with issuer: ${message}\n`);
  process.exit(2);
}

const GREETER = new URL('./server.js', import.meta.url).pathname;

const { values } = parseArgs({
  options: {
    verify: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '0' },
    keys: { type: 'string' },
    subjects: { type: 'string' },
  },
});
if (values.verify !== 'local' && values.verify !== 'rpc') fail(`--verify must be local or rpc, got ${JSON.stringify(values.verify)}`);
if (values.host !== '127.0.0.1' || values.port !== '0') fail('only --host 127.0.0.1 --port 0 is supported');
if (values.keys === undefined) fail('--keys FILE is required');

const started: ServerProcess[] = [];
try {
  // The issuer as the jwt-grpc row runs it, its VerifyJwt cache on (the default) as the
  // Greeter's local verifier has its own: both sides see one client's token again and
  // again, and the ratio is the price of the round trip, not of a cache miss.
  const issuer = await startServer('issuer', process.execPath, [
    CLI_ENTRY,
    'serve',
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--keys',
    values.keys,
    ...(values.subjects === undefined ? [] : ['--subjects', values.subjects]),
  ]);
  started.push(issuer);
  const greeter = await startServer('protected Greeter', process.execPath, [
    GREETER,
    '--port',
    '0',
    '--issuer',
    `127.0.0.1:${issuer.port}`,
    '--verify',
    values.verify,
  ]);
  started.push(greeter);
  const stop = (): void => {
    void Promise.all(started.map((server) => server.stop())).then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.stdout.write(`issuer on 127.0.0.1:${issuer.port}\nlistening on 127.0.0.1:${greeter.port}\n`);
} catch (error) {
  await Promise.all(started.map((server) => server.stop()));
  process.stderr.write(`protected with issuer: ${(error as Error).message}\n`);
  process.exit(1);
}
