/**
 * The Redis revocation store (`--revocation-store redis://HOST:PORT/DB`, or `rediss://`):
 * revocations shared by every replica of a deployment. A server loads this module with
 * `import()` only when that option is given; it loads the optional `redis` package
 * (node-redis) in turn.
 *
 * How a revocation travels: `add()` runs one script (src/revocation/redis-codec.ts) that
 * raises the version counter, SETs the entry with EX = the token's remaining lifetime and
 * PUBLISHes it; every replica's subscriber hears it within the Pub/Sub delay (well under
 * a second on one network). A replica that was away when the message went out finds out
 * from the version counter: it compares the counter with its own every `resyncIntervalMs`
 * (default 10 s) and after every reconnection, and rescans the `revoked:` keys when they
 * differ. So a replica is behind by at most the Pub/Sub delay while connected, and by at
 * most `resyncIntervalMs` after a lost message or once Redis is reachable again.
 *
 * While Redis is unreachable `add()` fails at once with ERR_REVOCATION_STORE_UNAVAILABLE
 * (the client keeps no offline queue; a command that hangs fails after
 * `commandTimeoutMs`), `up` is false, and the caller's in-memory set keeps answering.
 */
import { isIP } from 'node:net';
import { JwtGrpcError, invalidOption } from '../base/errors.js';
import type { Logger } from '../base/log.js';
import { installHint, redisModule } from '../base/optional-deps.js';
import { unavailable } from './record-codec.js';
import {
  REVOKE_SCRIPT,
  decodeMessage,
  decodeValue,
  encodeMessage,
  encodeValue,
  parseVersion,
  redisKeys,
  type RedisKeys,
} from './redis-codec.js';
import { resolveRedisStoreOptions, type RedisRevocationStoreOptions, type ResolvedRedisStoreOptions } from './redis-options.js';
import type { Revocation, RevocationStore } from '../contracts/revocation-store.js';

export { REDIS_STORE_DEFAULTS, type RedisRevocationStoreOptions } from './redis-options.js';

/** The part of a node-redis client this store uses: raw commands keep the typing small. */
interface RedisConnection {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  connect(): Promise<unknown>;
  sendCommand(args: readonly string[]): Promise<unknown>;
  subscribe(channel: string, listener: (message: string) => void): Promise<void>;
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: 'ready', listener: () => void): unknown;
  close(): Promise<void>;
  destroy(): void;
}

/** Connection attempts at start before start() gives up; afterwards a replica retries forever. */
const START_CONNECT_ATTEMPTS = 2;
/** Keys per SCAN step and per MGET during a resync. */
const SCAN_COUNT = 1_000;
/** Versions remembered ahead of a gap (see #heardAhead). */
const MAX_HEARD_AHEAD = 10_000;
/** The most indexes one reserveStatusIndexes call may take. */
const MAX_INDEX_RESERVATION = 1_000_000;

/**
 * A Redis-backed {@link RevocationStore}. Nothing connects until `start()`.
 *
 * @example
 * ```ts
 * const store = await createRedisRevocationStore(process.env.JWT_GRPC_REVOCATION_STORE!, { logger });
 * await store.start((revocations) => { for (const r of revocations) revoked.add(r); });
 * await store.add({ jti: 'b3f1c2', expiresAt: Math.floor(Date.now() / 1000) + 600, reason: 'key leaked' });
 * await store.close();
 * ```
 */
export async function createRedisRevocationStore(
  url: string,
  options: RedisRevocationStoreOptions & { readonly logger: Logger },
): Promise<RevocationStore> {
  const resolved = resolveRedisStoreOptions(url, options);
  return new RedisRevocationStore(loadRedis(), resolved, options.logger);
}

type RedisModule = ReturnType<typeof redisModule>;

/** node-redis, or an error naming the option and the package when it is not installed. */
function loadRedis(): RedisModule {
  try {
    return redisModule();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    throw invalidOption(
      'revocationStore',
      `a redis:// store needs node-redis 5, an optional peer dependency not installed here: ${installHint(['redis@^5'])}`,
    );
  }
}

class RedisRevocationStore implements RevocationStore {
  readonly kind = 'redis';
  readonly #options: ResolvedRedisStoreOptions;
  readonly #logger: Logger;
  readonly #keys: RedisKeys;
  readonly #errorReply: RedisModule['ErrorReply'];
  readonly #commands: RedisConnection;
  readonly #subscriber: RedisConnection;
  #onRevoked: ((revocations: readonly Revocation[]) => void) | undefined;
  #started = false;
  #closed = false;
  /** The last resync succeeded and no command has timed out since: memory matches Redis up to Pub/Sub. */
  #current = false;
  /** The version counter's value that memory is known to hold everything up to. */
  #syncedVersion = -1;
  /**
   * Versions heard above `#syncedVersion + 1`: two replicas' messages may arrive in the
   * other order than their versions, or during a rescan; once the gap fills they advance
   * `#syncedVersion` instead of costing a rescan. Bounded: past it, the next check rescans.
   */
  readonly #heardAhead = new Set<number>();
  #resyncing: Promise<void> | undefined;
  /** A resync was asked for while one ran: run another when it ends. */
  #rescanAfter = false;
  #timer: NodeJS.Timeout | undefined;
  /** A connection was lost and not yet back: logged once, not at every retry. */
  #outage = false;

  constructor(redis: RedisModule, options: ResolvedRedisStoreOptions, logger: Logger) {
    this.#options = options;
    this.#logger = logger;
    this.#keys = redisKeys(options.keyPrefix);
    this.#errorReply = redis.ErrorReply;
    const { host, port, tls, database, username, password } = options.connection;
    const clientOptions = {
      socket: {
        host,
        port,
        tls,
        // SNI carries host names only (RFC 6066); the certificate is checked against the host either way.
        ...(tls && isIP(host) === 0 ? { servername: host } : {}),
        connectTimeout: options.commandTimeoutMs,
        reconnectStrategy: (retries: number, cause: Error) => this.#reconnectDelay(retries, cause),
      },
      username,
      password,
      database,
      // Commands fail at once while disconnected instead of waiting for a reconnection
      // that may never come; a command sent into a hung connection fails after the timeout.
      disableOfflineQueue: true,
      commandOptions: { timeout: options.commandTimeoutMs },
    };
    // Each its own connection: a subscribed connection can run no other command.
    this.#commands = redis.createClient(clientOptions as Parameters<RedisModule['createClient']>[0]) as unknown as RedisConnection;
    this.#subscriber = redis.createClient(clientOptions as Parameters<RedisModule['createClient']>[0]) as unknown as RedisConnection;
    for (const [name, connection] of [
      ['commands', this.#commands],
      ['subscriber', this.#subscriber],
    ] as const) {
      connection.on('error', (err) => this.#onConnectionError(name, err));
      connection.on('ready', () => this.#onReady());
    }
  }

  get up(): boolean {
    return this.#started && !this.#closed && this.#current && this.#commands.isReady && this.#subscriber.isReady;
  }

  async start(onRevoked: (revocations: readonly Revocation[]) => void): Promise<void> {
    if (this.#started || this.#closed || this.#onRevoked !== undefined) {
      throw new JwtGrpcError('ERR_SERVER_STATE', 'the Redis revocation store was already started or closed');
    }
    this.#onRevoked = onRevoked;
    try {
      await Promise.all([this.#commands.connect(), this.#subscriber.connect()]);
      // Subscribed before the first scan: a revocation made during the scan arrives by one or the other.
      await this.#subscriber.subscribe(this.#keys.channel, (message) => this.#onMessage(message));
      await this.#resync();
    } catch (err) {
      this.#destroyConnections();
      this.#closed = true;
      throw unavailable(
        'revocationStore',
        `revocation store: Redis at ${this.#options.connection.target} is unavailable: ${this.#describe(err)}`,
        err,
      );
    }
    this.#started = true;
    this.#timer = setInterval(() => void this.#checkVersion(), this.#options.resyncIntervalMs);
    this.#timer.unref();
    this.#logger.info('revocation store: Redis connected', {
      target: this.#options.connection.target,
      resyncIntervalMs: this.#options.resyncIntervalMs,
    });
  }

  async add(revocation: Revocation): Promise<void> {
    if (!this.#started || this.#closed) throw unavailable('revocationStore', 'revocation store: the Redis store is not running', undefined);
    const { jti, expiresAt } = revocation;
    if (typeof jti !== 'string' || jti.length === 0 || !Number.isFinite(expiresAt)) {
      throw new JwtGrpcError('ERR_INVALID_REQUEST', 'a revocation needs a jti and a finite expiresAt');
    }
    // At least a second: an entry for a token already past its exp still reaches the other replicas.
    const seconds = Math.max(1, Math.ceil(expiresAt - Date.now() / 1000));
    const { revokedPrefix, version, channel } = this.#keys;
    try {
      await this.#send([
        'EVAL',
        REVOKE_SCRIPT,
        '2',
        revokedPrefix + jti,
        version,
        encodeValue(revocation),
        String(seconds),
        channel,
        encodeMessage(revocation),
      ]);
    } catch (err) {
      this.#onCommandFailed(err);
      throw unavailable('revocationStore', `revocation store: Redis did not store the revocation: ${this.#describe(err)}`, err);
    }
  }

  async reserveStatusIndexes(count: number): Promise<number> {
    if (!Number.isSafeInteger(count) || count < 1 || count > MAX_INDEX_RESERVATION) {
      throw new JwtGrpcError('ERR_INVALID_REQUEST', `reserveStatusIndexes: count must be an integer from 1 to ${MAX_INDEX_RESERVATION}`);
    }
    if (!this.#started || this.#closed) throw unavailable('revocationStore', 'revocation store: the Redis store is not running', undefined);
    try {
      const last = Number(await this.#send(['INCRBY', this.#keys.statusIndex, String(count)]));
      return last - count;
    } catch (err) {
      this.#onCommandFailed(err);
      throw unavailable('revocationStore', `revocation store: Redis did not allocate status-list indexes: ${this.#describe(err)}`, err);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    const graceful = Promise.all([this.#commands, this.#subscriber].map((c) => (c.isReady ? c.close() : undefined)));
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, this.#options.commandTimeoutMs).unref());
    await Promise.race([graceful.catch(() => undefined), deadline]);
    this.#destroyConnections();
  }

  /** Backoff between reconnection attempts; at start, a few quick tries and then start() fails. */
  #reconnectDelay(retries: number, cause: Error): number | Error | false {
    if (this.#closed) return false;
    if (!this.#started && retries + 1 >= START_CONNECT_ATTEMPTS) return cause;
    const jitter = Math.floor(Math.random() * 100);
    return Math.min(100 * 2 ** retries, this.#options.reconnectMaxDelayMs) + jitter;
  }

  #onConnectionError(name: string, err: Error): void {
    if (!this.#started || this.#closed) return;
    // Messages may be lost from here on: stale until a resync after the reconnection.
    this.#current = false;
    if (this.#outage) return;
    this.#outage = true;
    this.#logger.warn(
      `revocation store: lost the Redis connection (${name}): ${this.#describe(err)}; ` +
        'verification answers from memory, revocations fail until it is back',
      { target: this.#options.connection.target },
    );
  }

  /** After a reconnection, messages may have gone by: resync before claiming to be current. */
  #onReady(): void {
    if (!this.#started || this.#closed) return;
    if (this.#outage && this.#commands.isReady && this.#subscriber.isReady) {
      this.#outage = false;
      this.#logger.info('revocation store: Redis connection back, resyncing', { target: this.#options.connection.target });
    }
    this.#current = false;
    this.#resync().catch((err: unknown) => this.#onCommandFailed(err));
  }

  #onMessage(message: string): void {
    const decoded = decodeMessage(message);
    if (decoded === undefined) {
      this.#logger.warn('revocation store: ignored a message on the revocation channel that is not one; resyncing', {
        channel: this.#keys.channel,
      });
      this.#syncedVersion = -1;
      this.#heardAhead.clear();
      return;
    }
    this.#deliver([decoded.revocation]);
    if (decoded.version > this.#syncedVersion && this.#heardAhead.size < MAX_HEARD_AHEAD) this.#heardAhead.add(decoded.version);
    this.#advanceSyncedVersion();
  }

  /** Memory holds every version up to the first one not heard; a gap left waits for the next check. */
  #advanceSyncedVersion(): void {
    for (const version of this.#heardAhead) if (version <= this.#syncedVersion) this.#heardAhead.delete(version);
    while (this.#heardAhead.delete(this.#syncedVersion + 1)) this.#syncedVersion += 1;
  }

  /** Every `resyncIntervalMs`: one GET, and a rescan only when the counter moved without us. */
  async #checkVersion(): Promise<void> {
    if (this.#closed || this.#resyncing !== undefined) return;
    try {
      const version = parseVersion(await this.#send(['GET', this.#keys.version]));
      if (version !== this.#syncedVersion || !this.#current) await this.#resync();
    } catch (err) {
      this.#onCommandFailed(err);
    }
  }

  /**
   * One command on the command connection, failing after `commandTimeoutMs`. node-redis's
   * own timeout covers only a command still waiting to be written (which it then never
   * writes); one written to a Redis that hangs would wait forever, so this bound races it.
   */
  #send(args: readonly string[]): Promise<unknown> {
    const ms = this.#options.commandTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new JwtGrpcError('ERR_REVOCATION_STORE_UNAVAILABLE', `no answer from Redis within ${ms} ms`)), ms);
    });
    const command = this.#commands.sendCommand(args);
    command.catch(() => undefined); // its late failure, after the timeout, has nobody waiting
    return Promise.race([command, timeout]).finally(() => clearTimeout(timer));
  }

  /**
   * One resync at a time. A caller arriving during one waits for it, and another runs
   * after it: the running scan may have started before what prompted the call (the
   * subscriber back and subscribed again), so its result alone would leave a gap.
   */
  #resync(): Promise<void> {
    if (this.#resyncing !== undefined) {
      this.#rescanAfter = true;
      return this.#resyncing;
    }
    this.#resyncing = this.#scan().finally(() => {
      this.#resyncing = undefined;
      if (!this.#rescanAfter || this.#closed) return;
      this.#rescanAfter = false;
      this.#resync().catch((err: unknown) => this.#onCommandFailed(err));
    });
    return this.#resyncing;
  }

  /** Reads the counter, then every live revocation, and hands them over in batches. */
  async #scan(): Promise<void> {
    const version = parseVersion(await this.#send(['GET', this.#keys.version]));
    const { revokedPrefix, revokedPattern } = this.#keys;
    let cursor = '0';
    let unreadable = 0;
    do {
      const [next, keys] = (await this.#send(['SCAN', cursor, 'MATCH', revokedPattern, 'COUNT', String(SCAN_COUNT)])) as [string, string[]];
      cursor = next;
      if (keys.length === 0) continue;
      const values = (await this.#send(['MGET', ...keys])) as (string | null)[];
      const batch: Revocation[] = [];
      const unparsed: string[] = [];
      keys.forEach((key, i) => {
        const value = values[i];
        if (value === null || value === undefined) return; // expired between SCAN and MGET
        const revocation = decodeValue(key.slice(revokedPrefix.length), value);
        if (revocation === undefined) unparsed.push(key);
        else batch.push(revocation);
      });
      // A value this store cannot read still names a revoked jti: kept revoked for as long as Redis keeps it.
      for (const key of unparsed) batch.push(await this.#revocationFromTtl(key));
      unreadable += unparsed.length;
      this.#deliver(batch);
    } while (cursor !== '0');
    if (unreadable > 0)
      this.#logger.warn(
        `revocation store: Redis entries whose value is not a revocation: ${unreadable}; their jti stays revoked until the key expires`,
      );
    this.#syncedVersion = version;
    this.#advanceSyncedVersion();
    this.#current = true;
  }

  async #revocationFromTtl(key: string): Promise<Revocation> {
    const ttl = Number(await this.#send(['TTL', key]));
    // No expiry (-1) or gone (-2): kept for a day, after which a resync drops nothing and reads it again.
    const seconds = ttl > 0 ? ttl : 86_400;
    return { jti: key.slice(this.#keys.revokedPrefix.length), expiresAt: Math.floor(Date.now() / 1000) + seconds };
  }

  #deliver(revocations: readonly Revocation[]): void {
    if (revocations.length === 0 || this.#onRevoked === undefined) return;
    try {
      this.#onRevoked(revocations);
    } catch (err) {
      this.#logger.error(`revocation store: the revocation callback threw: ${this.#describe(err)}`);
    }
  }

  /** A command failed: unless Redis answered with an error, memory may be behind until the next resync. */
  #onCommandFailed(err: unknown): void {
    if (err instanceof this.#errorReply) return;
    if (this.#current && this.#started && !this.#closed) {
      this.#logger.warn(`revocation store: Redis command failed: ${this.#describe(err)}; marked stale until the next resync`, {
        target: this.#options.connection.target,
      });
    }
    this.#current = false;
  }

  #destroyConnections(): void {
    for (const connection of [this.#commands, this.#subscriber]) if (connection.isOpen) connection.destroy();
  }

  /** An error's message with the password cut out, should a library ever put it there. */
  #describe(err: unknown): string {
    const message = err instanceof Error ? err.message || err.name : String(err);
    const { password } = this.#options.connection;
    return password === undefined ? message : message.split(password).join('***');
  }
}
