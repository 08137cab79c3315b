import { type ClientHttp2Session, type ClientHttp2Stream, constants as http2Constants } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import * as grpc from '@grpc/grpc-js';
import {
  type GenerateJwtRequest,
  type GenerateJwtResponse,
  type GetJwksRequest,
  type GetJwksResponse,
  PROTO_PATH,
  type VerifyJwtRequest,
  type VerifyJwtResponse,
} from '../../src/lib/index.js';
import { clientConstructor } from '../../bench/kit/grpc-clients.js';
import { encodeGenerateJwtRequest, grpcFrame } from '../../bench/kit/grpc-body.js';

/**
 * Shared pieces of the reliability tests: a grpc-js JwtService client, raw HTTP/2 calls,
 * and small probes. Everything talks to 127.0.0.1 only.
 */

/** A GenerateJwt request as a grpc-js client sends it: the proto's defaults fill what is left out. */
export type GenerateRequest = Pick<GenerateJwtRequest, 'algorithm'> & Partial<GenerateJwtRequest>;

type Callback<T> = (error: grpc.ServiceError | null, response?: T) => void;

export interface GrpcJsJwtClient extends grpc.Client {
  GenerateJwt(request: GenerateRequest, options: grpc.CallOptions, callback: Callback<GenerateJwtResponse>): grpc.ClientUnaryCall;
  VerifyJwt(
    request: Pick<VerifyJwtRequest, 'jwt'> & Partial<VerifyJwtRequest>,
    options: grpc.CallOptions,
    callback: Callback<VerifyJwtResponse>,
  ): grpc.ClientUnaryCall;
  GetJwks(request: GetJwksRequest, options: grpc.CallOptions, callback: Callback<GetJwksResponse>): grpc.ClientUnaryCall;
}

type GrpcJsJwtClientConstructor = new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ChannelOptions,
) => GrpcJsJwtClient;

/**
 * A plain grpc-js JwtService client (from the proto, not the package's createJwtClient:
 * that one is bench/kit/grpc-clients.ts's `jwtClient`) for 127.0.0.1:`port`: the tests here
 * close it, or drop its connection, with calls in flight. `ownConnection` gives it a connection of its
 * own (grpc-js otherwise shares one between clients of the same target and options).
 */
export function grpcJsJwtClient(port: number, { ownConnection = true }: { ownConnection?: boolean } = {}): GrpcJsJwtClient {
  const JwtService = clientConstructor(PROTO_PATH, 'jwt.services.JwtService') as unknown as GrpcJsJwtClientConstructor;
  return new JwtService(
    `127.0.0.1:${port}`,
    grpc.credentials.createInsecure(),
    ownConnection ? { 'grpc.use_local_subchannel_pool': 1 } : {},
  );
}

/**
 * Resolves once the client's connection is up. The tests that close clients with calls
 * in flight wait for this first: grpc-js 1.14.7 itself leaks the TCP connection of a
 * client closed while that connection is still being set up (the client process keeps
 * it ESTABLISHED forever; measured: 8 of 8 such clients), which is the client's problem
 * and would hide what the server does.
 */
export function ready(client: grpc.Client, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => client.waitForReady(Date.now() + timeoutMs, (error) => (error ? reject(error) : resolve())));
}

/** One unary call as a promise that never rejects: the error or the response. */
export function call<T>(
  start: (callback: Callback<T>) => grpc.ClientUnaryCall,
): Promise<{ error: grpc.ServiceError | null; response: T | undefined }> {
  return new Promise((resolve) => {
    start((error, response) => resolve({ error, response }));
  });
}

export function generate(client: GrpcJsJwtClient, request: GenerateRequest, deadlineMs = 10_000) {
  return call<GenerateJwtResponse>((cb) => client.GenerateJwt(request, { deadline: Date.now() + deadlineMs }, cb));
}

/** Whether a TCP connect to 127.0.0.1:`port` is refused (true) or accepted (false). */
export function connectRefused(port: number, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = netConnect({ host: '127.0.0.1', port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(false);
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(err.code === 'ECONNREFUSED');
    });
  });
}

/** `global.gc`, exposed at run time when node was not started with --expose-gc. */
export function exposeGc(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing !== undefined) return existing;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** The end of a raw HTTP/2 gRPC call: its grpc-status and grpc-message (null if none came). */
export interface RawCallResult {
  readonly grpcStatus: number | null;
  readonly grpcMessage: string | null;
  readonly httpStatus: number | null;
  readonly error: string | null;
}

/**
 * Opens a gRPC call of JwtService `method` (e.g. `GenerateJwt`) on a raw node:http2
 * session: its request headers are sent, its body is the caller's to write (or never).
 */
export function openRawCall(session: ClientHttp2Session, method: string): ClientHttp2Stream {
  return session.request({
    [http2Constants.HTTP2_HEADER_METHOD]: 'POST',
    [http2Constants.HTTP2_HEADER_PATH]: `/jwt.services.JwtService/${method}`,
    [http2Constants.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
    te: 'trailers',
  });
}

/** One unary call of `method` over a raw node:http2 session, with any body bytes. */
export function rawUnary(session: ClientHttp2Session, method: string, body: Buffer, timeoutMs = 5000): Promise<RawCallResult> {
  return new Promise((resolve) => {
    let httpStatus: number | null = null;
    let grpcStatus: number | null = null;
    let grpcMessage: string | null = null;
    const stream = openRawCall(session, method);
    const done = (error: string | null): void => {
      clearTimeout(timer);
      resolve({ grpcStatus, grpcMessage, httpStatus, error });
    };
    const timer = setTimeout(() => {
      stream.close();
      done('timeout');
    }, timeoutMs);
    const status = (headers: Record<string, unknown>): void => {
      if (headers['grpc-status'] !== undefined) grpcStatus = Number(headers['grpc-status']);
      if (headers['grpc-message'] !== undefined) grpcMessage = decodeURIComponent(String(headers['grpc-message']));
    };
    stream.on('response', (headers) => {
      httpStatus = Number(headers[http2Constants.HTTP2_HEADER_STATUS]);
      status(headers);
    });
    stream.on('trailers', status);
    stream.on('data', () => {});
    stream.on('error', (err) => done(err.message));
    stream.on('close', () => done(null));
    stream.end(body);
  });
}

/**
 * One GenerateJwt call over a raw node:http2 session, whose socket (and so local port)
 * the caller knows: what tells which cluster worker served it.
 */
export function rawGenerate(session: ClientHttp2Session, algorithm: string, subject: string, timeoutMs = 5000): Promise<RawCallResult> {
  return rawUnary(session, 'GenerateJwt', grpcFrame(encodeGenerateJwtRequest(algorithm, subject)), timeoutMs);
}

/** A compact JWS (a token) anywhere in a text. */
export const JWT_PATTERN = /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}/g;
/** A private JWK member or a PEM private key, whoever's. */
export const PRIVATE_PATTERNS: readonly RegExp[] = [/"(d|k|p|q|dp|dq|qi)"\s*:\s*"[A-Za-z0-9_-]{16,}"/, /PRIVATE KEY/];

/** What of `text` (named `name` in the result) is a token or private key material. */
export function tokensAndPrivateKeys(name: string, text: string): string[] {
  const found = (text.match(JWT_PATTERN) ?? []).map((token) => `${name}: a token (${token.slice(0, 24)}...)`);
  for (const re of PRIVATE_PATTERNS) if (re.test(text)) found.push(`${name}: ${re}`);
  return found;
}
