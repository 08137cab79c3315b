// The REST peer on Node: the benchmark's reference work (bench/peers/README.md, "Work per
// call") behind `POST /token` on a plain node:http server (HTTP/1.1, keep-alive, default
// options), with fast-jwt, written the way a Node user would. The same signers, verifiers
// and subject pool as the gRPC peer node-fast-jwt (../fast-jwt-keys.ts), so that the two
// differ by the protocol alone: what gRPC costs over REST for this work.
//
// POST /token with `{"algorithm": "HS256"}` (and optionally `"subject"`) answers 200
// `{"jwt", "sub"}`; an algorithm with no key 400, a body that is not such JSON 400,
// another path 404, another method 405, a failed self-verification 500; each an
// `{"error"}` body.
//
// Usage: node server.js [--host H] [--port N] --keys FILE --subjects FILE
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import { TTL_SECONDS, loadKeys, loadSubjects } from '../fast-jwt-keys.js';
import { failure, parsePeerCommandLine } from '../node-peer.js';

/** Bytes a request body may have: the reference body is about 25. */
const MAX_BODY_BYTES = 64 * 1024;

const fail: (message: string) => never = failure('node-rest peer');

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function start(): void {
  const { host, port, keys, subjects: subjectsFile, proto, countCalls } = parsePeerCommandLine(fail);
  if (!keys || !subjectsFile) fail('--keys and --subjects are required');
  // Refused rather than ignored: no proto is served, and every outcome is an HTTP status already.
  if (proto !== undefined || countCalls) fail('--proto and --count-calls are gRPC options; this peer serves REST');
  const { signers } = loadKeys(keys);
  const subjects = loadSubjects(subjectsFile);
  let next = 0; // one thread: a plain counter is safe

  const issue = (res: ServerResponse, raw: string): void => {
    let request: { algorithm?: unknown; subject?: unknown };
    try {
      request = JSON.parse(raw) as typeof request;
    } catch {
      send(res, 400, { error: 'the body is not JSON' });
      return;
    }
    const signer = typeof request?.algorithm === 'string' ? signers.get(request.algorithm) : undefined;
    if (!signer) {
      send(res, 400, { error: `algorithm ${JSON.stringify(request?.algorithm)} is not configured` });
      return;
    }
    let sub = typeof request.subject === 'string' ? request.subject : '';
    if (!sub) {
      sub = subjects[next]!;
      next = (next + 1) % subjects.length;
    }
    const iat = Math.floor(Date.now() / 1000);
    let jwt: string;
    try {
      jwt = signer.sign({ sub, iat, exp: iat + TTL_SECONDS });
      if (signer.verify(jwt).sub !== sub) throw new Error('sub mismatch');
    } catch (err) {
      send(res, 500, { error: `self-verification failed: ${(err as Error).message}` });
      return;
    }
    send(res, 200, { jwt, sub });
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url !== '/token') return send(res, 404, { error: `no route ${req.url}` });
    if (req.method !== 'POST') return send(res, 405, { error: 'POST only' });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        send(res, 413, { error: `body over ${MAX_BODY_BYTES} bytes` });
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!res.headersSent) issue(res, Buffer.concat(chunks).toString('utf8'));
    });
  });
  server.on('error', (err) => fail(err.message));
  server.listen(port, host, () => {
    const address = server.address();
    const bound = typeof address === 'object' && address !== null ? address.port : port;
    process.stdout.write(`listening on ${host.includes(':') ? `[${host}]` : host}:${bound}\n`);
  });
  const stop = () => {
    // Graceful first (idle keep-alive connections close now); busy ones are cut after 2 s.
    const timer = setTimeout(() => {
      server.closeAllConnections();
      process.exit(0);
    }, 2000);
    server.close(() => {
      clearTimeout(timer);
      process.exit(0);
    });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

try {
  start();
} catch (err) {
  fail((err as Error).message);
}
