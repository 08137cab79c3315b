/**
 * The three parties of a protected call, started for real on 127.0.0.1 over TLS with
 * certificates made at test time: an issuer (createJwtServer), a protected service
 * (test/client/fixtures/greeter.proto behind jwtAuthInterceptor) and callers.
 */
import { fileURLToPath } from 'node:url';
import {
  type ChannelCredentials,
  type Interceptor,
  Metadata as GrpcMetadata,
  Server,
  ServerCredentials,
  type ServerInterceptor,
  type ServerUnaryCall,
  type ServiceClientConstructor,
  type ServiceError,
  type sendUnaryData,
  credentials,
  loadPackageDefinition,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import {
  type JwtClient,
  type JwtClientOptions,
  type JwtServer,
  type JwtServerOptions,
  type ServerTlsOptions,
  type KeySet,
  createJwtClient,
  generateKeys,
  optionalVerifiedClaims,
} from '../../src/lib/index.js';
import { type TestCerts, hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { closeAllServers, startIssuer as startTrackedIssuer } from '../../bench/kit/jwt-servers.js';
import { unary } from '../../bench/kit/grpc-clients.js';

export const GREETER_PROTO = fileURLToPath(new URL('./fixtures/greeter.proto', import.meta.url));
export const HELLO = '/demo.Greeter/Hello';
export const PUBLIC = '/demo.Greeter/Public';

/** The test certificates of the file that called {@link useTlsFixture} (a live binding: set in its beforeAll). */
export let certs: TestCerts;
/** The ES256 key set of the file that called {@link useTlsFixture}. */
export let keys: KeySet;

/**
 * The fixture the TLS client tests share: certificates and an ES256 key set made once per
 * file (read them as the live bindings `certs` and `keys`), every server closed after each
 * test, the certificates removed at the end.
 */
export function useTlsFixture(): void {
  beforeAll(async () => {
    if (!hasOpenssl()) throw new Error('these tests need the openssl command on PATH');
    certs = makeTestCerts();
    keys = await generateKeys({ algorithms: ['ES256'] });
  });
  afterEach(cleanup);
  afterAll(() => certs?.remove());
}

/** Connect to 127.0.0.1 but check the certificate's DNS name (Node warns about an IP as TLS ServerName). */
export const AS_LOCALHOST = { 'grpc.ssl_target_name_override': 'localhost' } as const;

const cleanups: (() => unknown)[] = [];

/** Closes everything started since the last call, newest first, then the issuers; for afterEach. */
export async function cleanup(): Promise<void> {
  while (cleanups.length > 0) await cleanups.pop()?.();
  await closeAllServers(1000);
}

/** The issuer's TLS (createJwtServer's listen). */
export function issuerTls(certs: TestCerts): ServerTlsOptions {
  return { cert: certs.serverCert, key: certs.serverKey };
}

/** The protected service's TLS (a grpc-js Server's bindAsync). */
export function serverTls(certs: TestCerts): ServerCredentials {
  return ServerCredentials.createSsl(null, [{ cert_chain: certs.serverCert, private_key: certs.serverKey }], false);
}

export function clientTls(certs: TestCerts): ChannelCredentials {
  return credentials.createSsl(certs.caCert);
}

/** An issuer on TLS; `close()` it to take it down (cleanup closes it too). */
export function startIssuer(certs: TestCerts, options: JwtServerOptions): Promise<{ server: JwtServer; target: string }> {
  return startTrackedIssuer(options, issuerTls(certs));
}

/** A JwtService client over TLS to `target`; closed by cleanup. */
export function issuerClient(certs: TestCerts, target: string, options: JwtClientOptions = {}): JwtClient {
  const client = createJwtClient(target, { credentials: clientTls(certs), channelOptions: AS_LOCALHOST, ...options });
  cleanups.push(() => client.close());
  return client;
}

/** Wraps a client to count the calls that go through it. */
export function counted(client: JwtClient): { client: JwtClient; calls: { generateJwt: number; getJwks: number } } {
  const calls = { generateJwt: 0, getJwks: 0 };
  return {
    calls,
    client: {
      ...client,
      generateJwt(request, options) {
        calls.generateJwt++;
        return client.generateJwt(request, options);
      },
      getJwks(request, options) {
        calls.getJwks++;
        return client.getJwks(request, options);
      },
    },
  };
}

interface HelloReply {
  message: string;
  claims_json: string;
}

type GreeterHandler = (call: ServerUnaryCall<{ name: string }, HelloReply>, callback: sendUnaryData<HelloReply>) => void;

let greeterCtor: ServiceClientConstructor | undefined;

export function greeterDefinition(): ServiceClientConstructor {
  greeterCtor ??= (
    loadPackageDefinition(loadSync(GREETER_PROTO, { keepCase: true, defaults: true })) as unknown as {
      demo: { Greeter: ServiceClientConstructor };
    }
  ).demo.Greeter;
  return greeterCtor;
}

/** What reached the protected service's handlers. */
export interface Greeter {
  readonly target: string;
  /** Every distinct authorization value a handler saw. */
  readonly tokens: Set<string>;
  /** Handler runs. */
  readonly handled: { count: number };
}

/** The protected service: answers `hello <sub>` and the claims its handler saw. */
export async function startGreeter(certs: TestCerts, interceptors: ServerInterceptor[]): Promise<Greeter> {
  const tokens = new Set<string>();
  const handled = { count: 0 };
  const answer: GreeterHandler = (call, callback) => {
    handled.count++;
    const claims = optionalVerifiedClaims(call);
    for (const value of call.metadata.get('authorization')) tokens.add(String(value));
    callback(null, { message: `hello ${claims?.sub ?? 'stranger'}`, claims_json: JSON.stringify(claims ?? null) });
  };
  const server = new Server({ interceptors });
  server.addService(greeterDefinition().service, { Hello: answer, Public: answer });
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', serverTls(certs), (err, bound) => (err === null ? resolve(bound) : reject(err)));
  });
  cleanups.push(() => new Promise<void>((resolve) => server.tryShutdown(() => resolve())));
  return { target: `127.0.0.1:${port}`, tokens, handled };
}

export interface GreeterClient {
  hello(options?: { metadata?: Record<string, string | string[]> }): Promise<HelloReply>;
  public(options?: { metadata?: Record<string, string | string[]> }): Promise<HelloReply>;
}

/** A caller of the protected service with these channel credentials (and client interceptors); closed by cleanup. */
export function greeterClient(target: string, channelCredentials: ChannelCredentials, interceptors: Interceptor[] = []): GreeterClient {
  const Ctor = greeterDefinition();
  const client = new Ctor(target, channelCredentials, { ...AS_LOCALHOST, interceptors });
  cleanups.push(() => client.close());
  const call =
    (method: 'Hello' | 'Public') =>
    (options: { metadata?: Record<string, string | string[]> } = {}): Promise<HelloReply> => {
      const metadata = new GrpcMetadata();
      for (const [key, value] of Object.entries(options.metadata ?? {})) for (const v of [value].flat()) metadata.add(key, v);
      return unary<HelloReply>(client, method, { name: 'test' }, 20_000, metadata);
    };
  return { hello: call('Hello'), public: call('Public') };
}

/** The ServiceError a call rejects with; fails the test when it succeeds. */
export async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (err) {
    return err as ServiceError;
  }
  throw new Error('expected the call to fail, but it succeeded');
}
