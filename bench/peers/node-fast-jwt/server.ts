// The ordinary Node peer: JwtService written the way a Node user would, with
// @grpc/grpc-js (default server options), @grpc/proto-loader and fast-jwt.
// Signers and verifiers are created once at start (signer per algorithm with
// its first key, verifier per kid). Per GenerateJwt it does what every server
// under test does: pick a subject, sign {sub, iat, exp = iat + 7200}, verify
// the token just made, check its sub.
//
// NODEMAXPROCS=N (N > 1): a node:cluster primary forks N workers sharing the
// port, the usual way to put a Node server on N cores, and respawns any that die.
//
// Usage: node server.js [--host H] [--port N] --keys FILE --subjects FILE [--proto FILE]
import cluster, { type Worker } from 'node:cluster';
import * as grpc from '@grpc/grpc-js';
import { TTL_SECONDS, loadKeys, loadSubjects } from '../fast-jwt-keys.js';
import { failure, parsePeerCommandLine, serveJwtService } from '../node-peer.js';

interface GenerateJwtRequest {
  algorithm: string;
  subject: string;
}
interface GenerateJwtResponse {
  jwt: string;
  sub: string;
  kid: string;
  expires_at: number;
}
interface VerifyJwtRequest {
  jwt: string;
}
interface VerifyJwtResponse {
  valid: boolean;
  sub?: string;
  reason?: string;
}

const fail: (message: string) => never = failure('node-fast-jwt peer');

function parseCli() {
  const { keys, subjects, ...rest } = parsePeerCommandLine(fail);
  if (!keys || !subjects) fail('--keys and --subjects are required');
  return { ...rest, keys, subjects };
}

// fast-jwt error code -> VerifyJwtResponse.Reason
const REASONS: Record<string, string> = {
  FAST_JWT_MALFORMED: 'MALFORMED',
  FAST_JWT_INVALID_TYPE: 'MALFORMED',
  FAST_JWT_INVALID_PAYLOAD: 'MALFORMED',
  FAST_JWT_EXPIRED: 'EXPIRED',
  FAST_JWT_INACTIVE: 'NOT_YET_VALID',
  FAST_JWT_INVALID_ALGORITHM: 'ALGORITHM_NOT_ALLOWED',
};

function startServer(opts: ReturnType<typeof parseCli>): void {
  const { signers, verifiers } = loadKeys(opts.keys);
  const subjects = loadSubjects(opts.subjects);
  let next = 0; // one thread per process: a plain counter is safe

  const generateJwt: grpc.handleUnaryCall<GenerateJwtRequest, GenerateJwtResponse> = (call, callback) => {
    const signer = signers.get(call.request.algorithm);
    if (!signer) {
      callback({ code: grpc.status.INVALID_ARGUMENT, details: `algorithm "${call.request.algorithm}" is not configured` });
      return;
    }
    let sub = call.request.subject;
    if (!sub) {
      sub = subjects[next]!;
      next = (next + 1) % subjects.length;
    }
    const iat = Math.floor(Date.now() / 1000);
    const exp = iat + TTL_SECONDS;
    let jwt: string;
    try {
      jwt = signer.sign({ sub, iat, exp });
      if (signer.verify(jwt).sub !== sub) throw new Error('sub mismatch');
    } catch (err) {
      callback({ code: grpc.status.INTERNAL, details: `self-verification failed: ${(err as Error).message}` });
      return;
    }
    callback(null, { jwt, sub, kid: signer.kid, expires_at: exp });
  };

  const verifyJwt: grpc.handleUnaryCall<VerifyJwtRequest, VerifyJwtResponse> = (call, callback) => {
    const token = call.request.jwt;
    let kid: unknown;
    try {
      kid = JSON.parse(Buffer.from(token.slice(0, token.indexOf('.')), 'base64url').toString()).kid;
    } catch {
      callback(null, { valid: false, reason: 'MALFORMED' });
      return;
    }
    const verify = typeof kid === 'string' ? verifiers.get(kid) : undefined;
    if (!verify) {
      callback(null, { valid: false, reason: 'UNKNOWN_KEY' });
      return;
    }
    try {
      const payload = verify(token);
      callback(null, { valid: true, sub: typeof payload.sub === 'string' ? payload.sub : '' });
    } catch (err) {
      callback(null, { valid: false, reason: REASONS[(err as { code?: string }).code ?? ''] ?? 'BAD_SIGNATURE' });
    }
  };

  serveJwtService({
    host: opts.host,
    port: opts.port,
    proto: opts.proto,
    countCalls: opts.countCalls,
    handlers: {
      GenerateJwt: generateJwt,
      VerifyJwt: verifyJwt,
      GetJwks: (_call: unknown, callback: grpc.sendUnaryData<{ jwks_json: string }>) => callback(null, { jwks_json: '{"keys":[]}' }),
    },
    onBound: (port) => {
      if (cluster.isWorker) process.send!({ listening: port });
      else process.stdout.write(`listening on ${opts.host}:${port}\n`);
    },
    fail,
  });
  // A worker whose primary is gone has nobody to answer to.
  if (cluster.isWorker) process.on('disconnect', () => process.exit(0));
}

function startPrimary(opts: ReturnType<typeof parseCli>, count: number): void {
  loadKeys(opts.keys); // fail at start in the primary rather than in N workers
  loadSubjects(opts.subjects);
  const ready = new Set<Worker>();
  let announced = false;
  let stopping = false;

  const fork = () => {
    const worker = cluster.fork();
    worker.on('message', (msg: { listening?: number }) => {
      if (msg.listening === undefined) return;
      ready.add(worker);
      if (!announced && ready.size === count) {
        announced = true;
        process.stdout.write(`listening on ${opts.host}:${msg.listening}\n`);
      }
    });
  };
  cluster.on('exit', (worker, code, signal) => {
    const wasReady = ready.delete(worker);
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
    } else if (!announced && !wasReady) {
      stopAll();
      fail(`worker ${worker.process.pid} failed at start (code ${code}, signal ${signal})`);
    } else {
      process.stderr.write(`worker ${worker.process.pid} died (code ${code}, signal ${signal}); respawning\n`);
      fork();
    }
  });
  const stopAll = () => {
    stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
  };
  const stop = () => {
    stopAll();
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  for (let i = 0; i < count; i++) fork();
}

const opts = parseCli();
const count = Number(process.env.NODEMAXPROCS ?? '1');
try {
  if (cluster.isPrimary && Number.isInteger(count) && count > 1) startPrimary(opts, count);
  else startServer(opts);
} catch (err) {
  fail((err as Error).message);
}
