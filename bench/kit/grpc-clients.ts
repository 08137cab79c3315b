/**
 * Clients for tests: the package's JwtService client, and for the other services (health,
 * reflection, test protos) grpc-js clients from the .proto, with promisified unary calls.
 */
import {
  type CallOptions,
  type ChannelCredentials,
  type ChannelOptions,
  type Client,
  type ServiceError,
  Metadata,
  loadPackageDefinition,
  status,
} from '@grpc/grpc-js';
import { type PackageDefinition, loadSync } from '@grpc/proto-loader';
import { GrpcStatusError, type JwtClient, createJwtClient } from '../../src/lib/index.js';

export type { JwtClient };

/** The proto-loader options the server uses. */
export const LOADER_OPTIONS = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true } as const;

/** Deadline of every helper call unless told otherwise: generous, but no call hangs a test forever. */
export const DEFAULT_DEADLINE_MS = 20_000;

type ClientConstructor = new (address: string, credentials: ChannelCredentials, options?: ChannelOptions) => Client;

const constructors = new Map<string, ClientConstructor>();

/** A grpc-js client constructor for `service` (e.g. `jwt.services.JwtService`) from a proto file. */
export function clientConstructor(protoPath: string, service: string): ClientConstructor {
  const key = `${protoPath}#${service}`;
  let ctor = constructors.get(key);
  if (ctor === undefined) {
    const definition: PackageDefinition = loadSync(protoPath, LOADER_OPTIONS);
    let node: unknown = loadPackageDefinition(definition);
    for (const part of service.split('.')) node = (node as Record<string, unknown> | undefined)?.[part];
    if (typeof node !== 'function') throw new Error(`${protoPath} has no service ${service}`);
    ctor = node as ClientConstructor;
    constructors.set(key, ctor);
  }
  return ctor;
}

/** Calls a unary method by name, with `metadata`; resolves to the response or rejects with the ServiceError. */
export function unary<Res>(
  client: Client,
  method: string,
  request: unknown,
  deadlineMs = DEFAULT_DEADLINE_MS,
  metadata = new Metadata(),
): Promise<Res> {
  const fn = (client as unknown as Record<string, unknown>)[method];
  if (typeof fn !== 'function') throw new Error(`client has no method ${method}`);
  const options: CallOptions = { deadline: Date.now() + deadlineMs };
  return new Promise<Res>((resolve, reject) => {
    (fn as (req: unknown, md: Metadata, opts: CallOptions, cb: (err: ServiceError | null, res?: Res) => void) => void).call(
      client,
      request,
      metadata,
      options,
      (err, res) => {
        if (err !== null) reject(err);
        else resolve(res as Res);
      },
    );
  });
}

export interface JwtClientOptions {
  /** Default: plaintext. */
  readonly credentials?: ChannelCredentials;
  /** Extra channel options (e.g. a distinct `grpc.primary_user_agent` to get a channel of its own). */
  readonly channelOptions?: ChannelOptions;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Deadline of each call, ms. Default {@link DEFAULT_DEADLINE_MS}. */
  readonly deadlineMs?: number;
}

/**
 * The package's own JwtService client (createJwtClient) to `host:port`, as a user builds it.
 * Close it (or use {@link ClientPool}). The wire itself is checked by clients written
 * elsewhere (ghz, grpcurl, grpc-go, grpcio: test/transport, test/reflection).
 */
export function jwtClient(port: number, options: JwtClientOptions = {}): JwtClient {
  return createJwtClient(`${options.host ?? '127.0.0.1'}:${port}`, {
    ...(options.credentials !== undefined && { credentials: options.credentials }),
    ...(options.channelOptions !== undefined && { channelOptions: options.channelOptions }),
    deadlineMs: options.deadlineMs ?? DEFAULT_DEADLINE_MS,
  });
}

/** Tracks clients so that an afterEach/afterAll can close them all. */
export class ClientPool {
  readonly #clients = new Set<{ close(): void }>();

  jwt(port: number, options?: JwtClientOptions): JwtClient {
    return this.track(jwtClient(port, options));
  }

  track<T extends { close(): void }>(client: T): T {
    this.#clients.add(client);
    return client;
  }

  closeAll(): void {
    for (const client of this.#clients) client.close();
    this.#clients.clear();
  }
}

/** How a call failed: its gRPC status and message, from either client's error type. */
export interface CallFailure {
  readonly code: number;
  readonly details: string;
}

/**
 * Rejects when `promise` resolves; resolves to how it failed: the status of a
 * GrpcStatusError (the package's client) or of a grpc-js ServiceError (stock clients).
 */
export async function callError(promise: Promise<unknown>): Promise<CallFailure> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof GrpcStatusError) return { code: err.status, details: err.details };
    const { code, details } = err as ServiceError;
    if (typeof code !== 'number') throw err;
    return { code, details };
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** The name of a gRPC status code, for readable assertion messages. */
export function statusName(code: number): string {
  return (status as unknown as Record<number, string>)[code] ?? String(code);
}

/** Decodes a compact JWS's header and payload (no verification). */
export function decodeJwt(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [header, payload] = token.split('.');
  if (header === undefined || payload === undefined) throw new Error(`not a compact JWS: ${token.slice(0, 40)}`);
  return {
    header: JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as Record<string, unknown>,
    payload: JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>,
  };
}
