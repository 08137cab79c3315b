// The grpc-js transport ceiling: JwtService on @grpc/grpc-js with default
// server options that answers constants and does no JWT work at all, so its
// rps is what grpc-js itself costs per unary call on this proto.
//
// Usage: node server.js [--host H] [--port N] [--proto FILE] (--keys/--subjects accepted, ignored)
import type * as grpc from '@grpc/grpc-js';
import { failure, parsePeerCommandLine, serveJwtService } from '../node-peer.js';

const fail: (message: string) => never = failure('echo peer');
const { host, port, proto, countCalls } = parsePeerCommandLine(fail);

// A realistic ES256-sized token (~200 chars): real header and payload, dummy signature.
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64url');
const SUB = 'alice.smith@example.com';
const JWT = [
  b64('{"alg":"ES256","typ":"JWT","kid":"echo-es256"}'),
  b64(`{"sub":"${SUB}","iat":1700000000,"exp":1700007200}`),
  b64(Buffer.alloc(64, 0x5a)),
].join('.');

type Callback<T> = grpc.sendUnaryData<T>;
serveJwtService({
  host,
  port,
  proto,
  countCalls,
  handlers: {
    GenerateJwt: (call: grpc.ServerUnaryCall<{ subject: string }, unknown>, cb: Callback<object>) =>
      cb(null, { jwt: JWT, sub: call.request.subject || SUB, kid: 'echo-es256', expires_at: 1700007200 }),
    VerifyJwt: (_call: unknown, cb: Callback<object>) => cb(null, { valid: true, sub: SUB }),
    GetJwks: (_call: unknown, cb: Callback<object>) => cb(null, { jwks_json: '{"keys":[]}' }),
  },
  onBound: (bound) => process.stdout.write(`listening on ${host}:${bound}\n`),
  fail,
});
