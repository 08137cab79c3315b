/**
 * The Redis revocation store's options, validated once: the `revocationStore` URL
 * (`redis://` or `rediss://`, ACL user and password, database number) and the tuning
 * options with their defaults in one object. The password never leaves this file except
 * inside the connection options: errors and the `target` used in logs leave it out.
 */
import { invalidOption } from '../base/errors.js';

/**
 * The defaults of {@link RedisRevocationStoreOptions}. `resyncIntervalMs` is the stated
 * bound on staleness when a Pub/Sub message was lost (docs/revocation-redis.md).
 *
 * @example
 * ```ts
 * const every = options.resyncIntervalMs ?? REDIS_STORE_DEFAULTS.resyncIntervalMs;
 * ```
 */
export const REDIS_STORE_DEFAULTS = {
  /** Every key and the channel start with it, so one Redis can serve several deployments. */
  keyPrefix: 'jwt-grpc:',
  /** How often a replica compares the version counter with its own and rescans when behind. */
  resyncIntervalMs: 10_000,
  /** How long one command (a revocation, a read) may take before it fails as UNAVAILABLE. */
  commandTimeoutMs: 2_000,
  /** The longest wait between two reconnection attempts (the backoff doubles up to it). */
  reconnectMaxDelayMs: 2_000,
} as const;

/** Bounds of the numeric options, inclusive. */
const BOUNDS = {
  resyncIntervalMs: [100, 3_600_000],
  commandTimeoutMs: [50, 60_000],
} as const;

const KEY_PREFIX_MAX = 128;

/**
 * Where and how to connect, from the URL; `target` is the URL without its password, for logs and errors.
 *
 * @example
 * ```ts
 * const { host, port, tls, target } = parseRedisUrl(url);
 * ```
 */
export interface RedisConnectionOptions {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  readonly database: number;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly target: string;
}

/**
 * The validated options, defaults applied.
 *
 * @example
 * ```ts
 * const { connection, keyPrefix, resyncIntervalMs } = resolveRedisStoreOptions(url, {});
 * ```
 */
export interface ResolvedRedisStoreOptions {
  readonly connection: RedisConnectionOptions;
  readonly keyPrefix: string;
  readonly resyncIntervalMs: number;
  readonly commandTimeoutMs: number;
  readonly reconnectMaxDelayMs: number;
}

const URL_SHAPE = 'redis://[USER:PASSWORD@]HOST[:PORT][/DB] or rediss://... (TLS)';

/**
 * Parses and checks a `revocationStore` Redis URL. Messages name the option and never
 * repeat the URL, which may hold a password.
 *
 * @example
 * ```ts
 * const { host, port, database, target } = parseRedisUrl('rediss://jwt:secret@redis.internal:6380/2');
 * // target: 'rediss://jwt@redis.internal:6380/2'
 * ```
 */
export function parseRedisUrl(url: unknown): RedisConnectionOptions {
  if (typeof url !== 'string' || url.length === 0) throw invalidOption('revocationStore', `expected ${URL_SHAPE}`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidOption('revocationStore', `not a URL; expected ${URL_SHAPE}`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw invalidOption('revocationStore', `scheme '${parsed.protocol}' is not redis: or rediss:; expected ${URL_SHAPE}`);
  }
  // URL keeps the brackets of an IPv6 literal; net.connect wants the bare address.
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host.length === 0) throw invalidOption('revocationStore', `no host; expected ${URL_SHAPE}`);
  const database = parseDatabase(parsed.pathname);
  if (parsed.search !== '' || parsed.hash !== '') {
    throw invalidOption(
      'revocationStore',
      'query parameters and fragments are not read; put the user and password before the host and the database after it',
    );
  }
  const port = parsed.port === '' ? 6379 : Number(parsed.port);
  const username = parsed.username === '' ? undefined : decodeURIComponent(parsed.username);
  const password = parsed.password === '' ? undefined : decodeURIComponent(parsed.password);
  const user = username === undefined ? '' : `${encodeURIComponent(username)}@`;
  const target = `${parsed.protocol}//${user}${parsed.host}/${database}`;
  return { host, port, tls: parsed.protocol === 'rediss:', database, username, password, target };
}

function parseDatabase(pathname: string): number {
  if (pathname === '' || pathname === '/') return 0;
  const match = /^\/(\d{1,5})$/.exec(pathname);
  if (match === null) throw invalidOption('revocationStore', `the path must be a database number (/0, /1, ...); expected ${URL_SHAPE}`);
  return Number(match[1]);
}

/**
 * The options of {@link createRedisRevocationStore} beyond the URL.
 *
 * @example
 * ```ts
 * const options: RedisRevocationStoreOptions = { logger, keyPrefix: 'jwt-grpc-staging:', resyncIntervalMs: 5_000 };
 * ```
 */
export interface RedisRevocationStoreOptions {
  /** Default `jwt-grpc:`. 1 to 128 characters, no whitespace. */
  readonly keyPrefix?: string;
  /** Default 10 000 (10 s), 100 to 3 600 000: the bound on staleness after a lost message. */
  readonly resyncIntervalMs?: number;
  /** Default 2 000, 50 to 60 000: how long a revocation may wait on Redis before it fails as UNAVAILABLE. */
  readonly commandTimeoutMs?: number;
}

/**
 * The URL and the options checked and the defaults applied, once, at start.
 *
 * @example
 * ```ts
 * const resolved = resolveRedisStoreOptions('redis://127.0.0.1:6379/0', { resyncIntervalMs: 1_000 });
 * ```
 */
export function resolveRedisStoreOptions(url: unknown, options: RedisRevocationStoreOptions): ResolvedRedisStoreOptions {
  const keyPrefix = options.keyPrefix ?? REDIS_STORE_DEFAULTS.keyPrefix;
  if (typeof keyPrefix !== 'string' || keyPrefix.length === 0 || keyPrefix.length > KEY_PREFIX_MAX || /\s/.test(keyPrefix)) {
    throw invalidOption('keyPrefix', `expected 1 to ${KEY_PREFIX_MAX} characters without whitespace`);
  }
  return {
    connection: parseRedisUrl(url),
    keyPrefix,
    resyncIntervalMs: boundedInteger('resyncIntervalMs', options.resyncIntervalMs ?? REDIS_STORE_DEFAULTS.resyncIntervalMs),
    commandTimeoutMs: boundedInteger('commandTimeoutMs', options.commandTimeoutMs ?? REDIS_STORE_DEFAULTS.commandTimeoutMs),
    reconnectMaxDelayMs: REDIS_STORE_DEFAULTS.reconnectMaxDelayMs,
  };
}

function boundedInteger(field: keyof typeof BOUNDS, value: unknown): number {
  const [min, max] = BOUNDS[field];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidOption(field, `expected an integer from ${min} to ${max} (milliseconds)`);
  }
  return value;
}
