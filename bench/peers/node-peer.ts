// What both Node peers share: their command line (README.md, "Command line"), and
// JwtService served the way an ordinary grpc-js user writes it: the proto loaded with
// @grpc/proto-loader, a grpc.Server with default options, stopped on SIGTERM/SIGINT
// (graceful, forced after 2 s, exit 0).
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { PROTO_PATH } from '../../src/base/package-root.js';

/** A start error: a message on stderr, prefixed with the peer's name, and exit status 1. */
export function failure(peer: string): (message: string) => never {
  return (message) => {
    process.stderr.write(`${peer}: ${message}\n`);
    process.exit(1);
  };
}

export interface PeerCommandLine {
  readonly host: string;
  readonly port: number;
  readonly keys: string | undefined;
  readonly subjects: string | undefined;
  readonly proto: string | undefined;
  /** `--count-calls`: count finished calls by outcome (see {@link serveJwtService}). */
  readonly countCalls: boolean;
}

/** `--host H --port N --keys FILE --subjects FILE --proto FILE`; a bad flag or port is a start error. */
export function parsePeerCommandLine(fail: (message: string) => never): PeerCommandLine {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        host: { type: 'string', default: '127.0.0.1' },
        port: { type: 'string', default: '50051' },
        keys: { type: 'string' },
        subjects: { type: 'string' },
        proto: { type: 'string' },
        'count-calls': { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    return fail((err as Error).message);
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`bad --port ${values.port}`);
  return { host: values.host, port, keys: values.keys, subjects: values.subjects, proto: values.proto, countCalls: values['count-calls'] };
}

export interface ServeOptions {
  readonly host: string;
  readonly port: number;
  /** Default: the package's proto/jwt.proto. */
  readonly proto?: string;
  readonly handlers: grpc.UntypedServiceImplementation;
  /**
   * Count finished calls by outcome and print `calls ok=N failed=M` on stdout at each SIGUSR1,
   * as the Go peer's `--count-calls` (bench/load/ok-count.ts): h2load sees HTTP statuses only.
   * Off: the handlers run unwrapped.
   */
  readonly countCalls?: boolean;
  /** Called once the port is bound, with the real port (`--port 0` picks one). */
  readonly onBound: (port: number) => void;
  /** Reports a start error and exits 1. */
  readonly fail: (message: string) => never;
}

export function serveJwtService(options: ServeOptions): void {
  const packageDefinition = protoLoader.loadSync(options.proto ?? PROTO_PATH, {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const proto = grpc.loadPackageDefinition(packageDefinition) as unknown as {
    jwt: { services: { JwtService: grpc.ServiceClientConstructor } };
  };
  const server = new grpc.Server(); // default options on purpose
  server.addService(proto.jwt.services.JwtService.service, options.countCalls === true ? counted(options.handlers) : options.handlers);

  const { host, port } = options;
  const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, bound) => {
    if (err) options.fail(err.message);
    options.onBound(bound);
  });

  const stop = () => {
    // Graceful first; a client that keeps its streams open gets cut after 2 s.
    const timer = setTimeout(() => server.forceShutdown(), 2000);
    server.tryShutdown(() => {
      clearTimeout(timer);
      process.exit(0);
    });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

/** The unary handlers, each counting its outcome; SIGUSR1 prints the counts. */
function counted(handlers: grpc.UntypedServiceImplementation): grpc.UntypedServiceImplementation {
  let ok = 0;
  let failed = 0;
  process.on('SIGUSR1', () => process.stdout.write(`calls ok=${ok} failed=${failed}\n`));
  const wrapped: grpc.UntypedServiceImplementation = {};
  for (const [name, handler] of Object.entries(handlers)) {
    wrapped[name] = ((call: unknown, callback: grpc.sendUnaryData<unknown>) =>
      (handler as grpc.handleUnaryCall<unknown, unknown>)(call as grpc.ServerUnaryCall<unknown, unknown>, (error, value) => {
        if (error) failed++;
        else ok++;
        callback(error, value);
      })) as grpc.UntypedHandleCall;
  }
  return wrapped;
}
