// A protected grpc-js service: demo.Greeter/Hello behind jwtAuthInterceptor, answering
// "hello <sub>" from the verified claims. It measures what authenticating each call costs
// a service that receives jwt-grpc's tokens, two ways:
//
//   --verify local  createRemoteVerifier: the issuer's JWK Set fetched once (GetJwks), each
//                   token verified in this process (ES256: one signature check, or a cache hit)
//   --verify rpc    one VerifyJwt call to the issuer per incoming call
//   --verify none   no interceptor: the same service unprotected, the baseline
//
// The issuer is a jwt-grpc server on plaintext (--issuer HOST:PORT). Clients send
// `authorization: Bearer <jwt>` (ghz: --metadata '{"authorization":"Bearer ..."}').
//
// Usage: node server.js [--host H] [--port N] --issuer HOST:PORT [--verify local|rpc|none] [--audience A] [--proto FILE]
// Prints `listening on HOST:PORT` once bound; SIGTERM/SIGINT stop it (forced after 2 s), exit 0.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import {
  type Algorithm,
  type JwtClient,
  type JwtPayload,
  type TokenVerifier,
  type VerifyFailureReason,
  type VerifyResult,
  ANY_AUDIENCE,
  createJwtClient,
  createRemoteVerifier,
  createStderrLogger,
  jwtAuthInterceptor,
  optionalVerifiedClaims,
} from '../../../src/lib/index.js';

function fail(message: string): never {
  process.stderr.write(`protected peer: ${message}\n`);
  process.exit(1);
}

// bench/peers/protected/greeter.proto under the package.json above this file: works from
// both bench/peers/protected/ and dist/bench/peers/protected/.
function findProto(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'bench', 'peers', 'protected', 'greeter.proto');
    if (dirname(dir) === dir) fail('package.json not found above this file; pass --proto');
  }
}

function parseCli() {
  try {
    const { values } = parseArgs({
      options: {
        host: { type: 'string', default: '127.0.0.1' },
        port: { type: 'string', default: '50051' },
        issuer: { type: 'string' },
        verify: { type: 'string', default: 'local' },
        audience: { type: 'string' },
        proto: { type: 'string' },
      },
    });
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`bad --port ${values.port}`);
    if (values.issuer === undefined) throw new Error('--issuer HOST:PORT is required');
    if (values.verify !== 'local' && values.verify !== 'rpc' && values.verify !== 'none') {
      throw new Error(`--verify must be local, rpc or none, got ${values.verify}`);
    }
    return { ...values, port, issuer: values.issuer, verify: values.verify, proto: values.proto ?? findProto() };
  } catch (err) {
    return fail((err as Error).message);
  }
}

/** A verifier that asks the issuer about every token (VerifyJwt): what a service does without local verification. */
function rpcVerifier(issuer: JwtClient): TokenVerifier {
  return {
    async verify(token, expect): Promise<VerifyResult> {
      // VerifyJwt's empty audience checks none, as ANY_AUDIENCE asks.
      const audience = typeof expect?.audience === 'string' ? expect.audience : '';
      const answer = await issuer.verifyJwt({ jwt: token, audience, issuer: expect?.issuer ?? '' });
      if (!answer.valid) return { valid: false, reason: answer.reason as VerifyFailureReason, message: 'refused by VerifyJwt' };
      const header = JSON.parse(Buffer.from(token.slice(0, token.indexOf('.')), 'base64url').toString('utf8')) as {
        alg: Algorithm;
        kid: string;
      };
      return {
        valid: true,
        alg: header.alg,
        kid: header.kid,
        payload: JSON.parse(answer.claims_json) as JwtPayload,
        payloadJson: answer.claims_json,
      };
    },
  };
}

const options = parseCli();
// The benchmark's tokens carry no aud unless --audience names one: without it, no audience is checked, on purpose.
const audience = options.audience ?? ANY_AUDIENCE;
const issuer = createJwtClient(options.issuer);
let verifier: TokenVerifier | undefined;
if (options.verify === 'local') {
  const remote = createRemoteVerifier(issuer, { audience, logger: createStderrLogger() });
  // Fetch the JWK Set before serving, so the first calls do not all wait for it.
  await remote.refresh().catch((err: unknown) => fail(`cannot fetch the JWK Set from ${options.issuer}: ${(err as Error).message}`));
  verifier = remote;
} else if (options.verify === 'rpc') {
  verifier = rpcVerifier(issuer);
}

const definition = grpc.loadPackageDefinition(protoLoader.loadSync(options.proto, { keepCase: true, defaults: true })) as unknown as {
  demo: { Greeter: grpc.ServiceClientConstructor };
};
// Default server options on purpose, as the other peers: only the interceptor is added.
const interceptors = verifier === undefined ? [] : [jwtAuthInterceptor(verifier, { audience })];
const server = new grpc.Server({ interceptors });
server.addService(definition.demo.Greeter.service, {
  Hello: (call: grpc.ServerUnaryCall<{ name: string }, unknown>, callback: grpc.sendUnaryData<{ message: string }>) => {
    callback(null, { message: `hello ${optionalVerifiedClaims(call)?.sub ?? ''}` });
  },
});

const address = options.host.includes(':') ? `[${options.host}]:${options.port}` : `${options.host}:${options.port}`;
server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, bound) => {
  if (err) fail(err.message);
  process.stdout.write(`listening on ${options.host}:${bound}\n`);
});

const stop = (): void => {
  const timer = setTimeout(() => server.forceShutdown(), 2000);
  server.tryShutdown(() => {
    clearTimeout(timer);
    issuer.close();
    process.exit(0);
  });
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
