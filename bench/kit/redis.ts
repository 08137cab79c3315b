/**
 * A throwaway `redis-server` on a free loopback port, for the Redis revocation store's
 * tests and its memory measurement: no persistence (`--save ''`, no AOF), a password so
 * that the store's URL carries one (and the tests can check it is never logged), run
 * through the launcher like every other process the harness starts; and a TCP relay that
 * cuts one client off Redis, as a partition would.
 */
import { type Server, type Socket, createConnection, createServer } from 'node:net';
import { findOnPath, isExecutable } from './exec.js';
import { type LaunchedProcess, launch } from './launcher.js';
import { freePort } from './ports.js';

/** How to get redis-server on Debian and Ubuntu (`.ci/run` does it as root). */
export const REDIS_INSTALL = 'apt-get install redis-server';

/** Where Debian installs it, should PATH not hold /usr/bin. */
const SYSTEM_REDIS = '/usr/bin/redis-server';

/** The path of redis-server (PATH first, then /usr/bin), or null. */
export function findRedisServer(): string | null {
  return findOnPath('redis-server') ?? (isExecutable(SYSTEM_REDIS) ? SYSTEM_REDIS : null);
}

/** A running redis-server and the URL a store connects with. */
export interface RedisServer {
  readonly process: LaunchedProcess;
  readonly port: number;
  readonly password: string;
  /** `redis://:PASSWORD@127.0.0.1:PORT/DB`, or `rediss://:PASSWORD@localhost:PORT/DB` with TLS (the name its certificate holds). */
  url(database?: number): string;
  /** SIGTERM, then SIGKILL after a second: the data goes with it. */
  stop(): Promise<void>;
}

export interface RedisServerOptions {
  /** Default: a free one. */
  readonly port?: number;
  readonly password?: string;
  /** TLS only (`--tls-port`, no plain port), with this certificate and key; clients are not asked for one. */
  readonly tls?: { readonly certFile: string; readonly keyFile: string };
}

/** Redis logs this once it accepts connections. */
const READY = /Ready to accept connections/;

/**
 * Starts redis-server on 127.0.0.1, on `port` or a free one, resolving once it accepts
 * connections. A free port taken before Redis binds it is retried once with another.
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const redis = findRedisServer();
  if (redis === null) throw new Error(`redis-server not found on PATH or at ${SYSTEM_REDIS}: install it (\`${REDIS_INSTALL}\`)`);
  const password = options.password ?? 'test-password-not-a-secret';
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort());
    const listen =
      options.tls === undefined
        ? ['--port', String(port)]
        : [
            '--port',
            '0',
            '--tls-port',
            String(port),
            '--tls-cert-file',
            options.tls.certFile,
            '--tls-key-file',
            options.tls.keyFile,
            '--tls-auth-clients',
            'no',
          ];
    const proc = launch(redis, [
      ...listen,
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--requirepass',
      password,
      '--loglevel',
      'notice',
      '--dir',
      '/tmp',
    ]);
    try {
      await proc.waitFor('stdout', READY, 10_000);
      return {
        process: proc,
        port,
        password,
        url: (database = 0) =>
          `${options.tls === undefined ? 'redis' : 'rediss'}://:${encodeURIComponent(password)}@${options.tls === undefined ? '127.0.0.1' : 'localhost'}:${port}/${database}`,
        stop: () => proc.stop(1_000).then(() => undefined),
      };
    } catch (error) {
      proc.kill();
      await proc.closed;
      if (attempt === 1 && options.port === undefined && /Address already in use/.test(proc.stdout)) continue;
      throw new Error(`redis-server did not start: ${(error as Error).message}\n${proc.stdout}${proc.stderr}`);
    }
  }
}

/**
 * A TCP relay between one replica and Redis: `cut()` drops its connections and refuses new
 * ones, as a network partition or a Redis restart would look from that replica alone.
 */
export class Relay {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #open = true;

  constructor(targetPort: number) {
    this.#server = createServer((client) => {
      if (!this.#open) return void client.destroy();
      const upstream = createConnection(targetPort, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket
          .on('error', () => undefined)
          .on('close', () => {
            this.#sockets.delete(socket);
            client.destroy();
            upstream.destroy();
          });
      }
      client.pipe(upstream).pipe(client);
    });
  }

  listen(): Promise<number> {
    return new Promise((resolve) => this.#server.listen(0, '127.0.0.1', () => resolve((this.#server.address() as { port: number }).port)));
  }

  cut(): void {
    this.#open = false;
    for (const socket of this.#sockets) socket.destroy();
  }

  restore(): void {
    this.#open = true;
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}
