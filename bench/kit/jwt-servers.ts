/** In-process JwtServers for tests: started on 127.0.0.1:0, tracked, closed by cleanup. */
import { createHmac } from 'node:crypto';
import {
  type JwtServer,
  type JwtServerOptions,
  type KeySet,
  type Logger,
  type ServerTlsOptions,
  type Transport,
  createJwtServer,
  exportKeys,
  generateKeys,
  silentLogger,
} from '../../src/lib/index.js';
import { TRANSPORTS as ALL_TRANSPORTS } from '../../src/options/table.js';

/**
 * Every transport createJwtServer runs on. The suites about serving and calls run once on
 * each (`describe.each(TRANSPORTS)`), and `jwt-grpc serve` with `--transport` ({@link transportArgs}).
 */
export const TRANSPORTS: readonly Transport[] = ALL_TRANSPORTS;

/** The flags of `jwt-grpc serve` that select `transport`. */
export function transportArgs(transport: Transport): string[] {
  return ['--transport', transport];
}

const servers = new Set<JwtServer>();

/**
 * Creates a server on the transport named (silent unless a logger is given), listens on
 * 127.0.0.1:0; closed by {@link closeAllServers}.
 */
export async function startServer(
  options: JwtServerOptions & { readonly transport: Transport },
): Promise<{ server: JwtServer; port: number }> {
  const server = createJwtServer({ logger: silentLogger, ...options });
  servers.add(server);
  const port = await server.listen('127.0.0.1:0');
  return { server, port };
}

/**
 * An issuer as a client test needs one: createJwtServer on its default transport (silent
 * unless a logger is given) on 127.0.0.1:0, with TLS when `tls` is given. Closed by
 * {@link closeAllServers}, or earlier by its own `close()`.
 */
export async function startIssuer(
  options: JwtServerOptions,
  tls?: ServerTlsOptions,
): Promise<{ server: JwtServer; port: number; target: string }> {
  const server = trackServer(createJwtServer({ logger: silentLogger, ...options }));
  const port = await server.listen('127.0.0.1:0', tls);
  return { server, port, target: `127.0.0.1:${port}` };
}

/** Tracks a server made elsewhere so cleanup closes it. */
export function trackServer(server: JwtServer): JwtServer {
  servers.add(server);
  return server;
}

/** Closes every tracked server (forcing after `graceMs`, default 2 s); for afterEach/afterAll. */
export async function closeAllServers(graceMs = 2000): Promise<void> {
  const list = [...servers];
  servers.clear();
  await Promise.all(list.map((server) => server.close({ graceMs })));
}

let allKeys: Promise<KeySet> | undefined;

/** One key per algorithm, generated once per test file (RSA generation is the slow part). */
export function sharedKeys(): Promise<KeySet> {
  allKeys ??= generateKeys();
  return allKeys;
}

/** The first HS256 secret of `keys`, for signing tokens by hand. */
function hs256Secret(keys: KeySet): { kid: string; secret: Buffer } {
  const jwk = exportKeys(keys, { includePrivate: true }).keys.find((key) => key.alg === 'HS256');
  if (jwk === undefined || typeof jwk.k !== 'string') throw new Error('key set has no HS256 key');
  return { kid: jwk.kid, secret: Buffer.from(jwk.k, 'base64url') };
}

/**
 * A compact JWS with exactly this header and payload text, signed with the set's HS256
 * key: lets tests build well-signed tokens whose content is wrong. `header` may be a
 * string (used as is) or an object (kid defaults to the HS256 key's).
 */
export function signHs256(keys: KeySet, header: string | Record<string, unknown>, payload: string): string {
  const { kid, secret } = hs256Secret(keys);
  const headerText = typeof header === 'string' ? header : JSON.stringify({ alg: 'HS256', typ: 'JWT', kid, ...header });
  const input = `${Buffer.from(headerText).toString('base64url')}.${Buffer.from(payload).toString('base64url')}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

/** Seconds since the epoch, as the service counts them. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** A logger that records every line, for assertions. */
export function recordingLogger(): Logger & { lines: { level: string; message: string; fields: unknown }[] } {
  const lines: { level: string; message: string; fields: unknown }[] = [];
  const record =
    (level: string) =>
    (message: string, fields?: Readonly<Record<string, unknown>>): void => {
      lines.push({ level, message, fields });
    };
  return { lines, info: record('info'), warn: record('warn'), error: record('error') };
}
