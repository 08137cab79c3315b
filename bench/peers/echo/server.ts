// The grpc-js transport ceiling: JwtService on @grpc/grpc-js with default
// server options that answers constants and does no JWT work at all, so its
// rps is what grpc-js itself costs per unary call on this proto.
//
// Usage: node server.js [--host H] [--port N] [--proto FILE] (--keys/--subjects accepted, ignored)
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

function fail(message: string): never {
  process.stderr.write(`echo peer: ${message}\n`);
  process.exit(1);
}

// proto/jwt.proto next to the package.json above this file (source or dist/).
function findProto(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'proto', 'jwt.proto');
    if (dirname(dir) === dir) fail('package.json not found above this file; pass --proto');
  }
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '50051' },
      keys: { type: 'string' },
      subjects: { type: 'string' },
      proto: { type: 'string' },
    },
  }));
} catch (err) {
  fail((err as Error).message);
}
const { host } = values;
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`bad --port ${values.port}`);

// A realistic ES256-sized token (~200 chars): real header and payload, dummy signature.
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64url');
const SUB = 'alice.smith@example.com';
const JWT = [
  b64('{"alg":"ES256","typ":"JWT","kid":"echo-es256"}'),
  b64(`{"sub":"${SUB}","iat":1700000000,"exp":1700007200}`),
  b64(Buffer.alloc(64, 0x5a)),
].join('.');

const packageDefinition = protoLoader.loadSync(values.proto ?? findProto(), {
  keepCase: true, longs: String, enums: String, defaults: true, oneofs: true,
});
const proto = grpc.loadPackageDefinition(packageDefinition) as unknown as {
  jwt: { services: { JwtService: grpc.ServiceClientConstructor } };
};
type Callback<T> = grpc.sendUnaryData<T>;
const server = new grpc.Server(); // default options on purpose
server.addService(proto.jwt.services.JwtService.service, {
  GenerateJwt: (call: grpc.ServerUnaryCall<{ subject: string }, unknown>, cb: Callback<object>) =>
    cb(null, { jwt: JWT, sub: call.request.subject || SUB, kid: 'echo-es256', expires_at: 1700007200 }),
  VerifyJwt: (_call: unknown, cb: Callback<object>) => cb(null, { valid: true, sub: SUB }),
  GetJwks: (_call: unknown, cb: Callback<object>) => cb(null, { jwks_json: '{"keys":[]}' }),
});

const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, bound) => {
  if (err) fail(err.message);
  process.stdout.write(`listening on ${host}:${bound}\n`);
});

const stop = () => {
  const timer = setTimeout(() => server.forceShutdown(), 2000);
  server.tryShutdown(() => {
    clearTimeout(timer);
    process.exit(0);
  });
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
