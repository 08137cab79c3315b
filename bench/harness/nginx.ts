/**
 * nginx as the L7 gRPC proxy in front of `jwt-grpc serve` replicas, for the tests and the
 * benchmark: the shipped deploy/nginx/jwt-grpc.conf, with only its upstream addresses and
 * its listen ports replaced (its discovery part cut out where the replicas serve none), run unprivileged from a temporary prefix through the launcher
 * (so it is paused, stopped and killed like every other process the harness starts).
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoPath } from '../kit/paths.js';
import { findOnPath, isExecutable, tasksetCommand } from '../kit/exec.js';
import { type ServerProcess, extend, launch } from '../kit/launcher.js';
import { freePort } from '../kit/ports.js';

/** The shipped configuration: an `http {}`-level snippet (upstream + server). */
export const SHIPPED_NGINX_CONF = repoPath('deploy', 'nginx', 'jwt-grpc.conf');

/** How to get nginx with the gRPC and HTTP/2 modules on Debian and Ubuntu. */
export const NGINX_INSTALL = 'apt-get install nginx-light';

/** Where Debian installs nginx: /usr/sbin, which is not on an unprivileged user's PATH. */
const SYSTEM_NGINX = '/usr/sbin/nginx';

/** The path of nginx (PATH first, then /usr/sbin), or null. */
export function findNginx(): string | null {
  return findOnPath('nginx') ?? (isExecutable(SYSTEM_NGINX) ? SYSTEM_NGINX : null);
}

/** nginx's path; throws naming the program and how to install it. */
export function requireNginx(): string {
  const nginx = findNginx();
  if (nginx === null) throw new Error(`nginx not found on PATH or at ${SYSTEM_NGINX}: install it (\`${NGINX_INSTALL}\`)`);
  return nginx;
}

/** An upstream's replica lines, e.g. `    server 127.0.0.1:50061 max_fails=1 fail_timeout=5s;`. */
const UPSTREAM_SERVER = /^(\s*)server 127\.0\.0\.1:\d+( [^;]*)?;\n/gm;
/** The gRPC server block's listen line. */
const LISTEN = /^(\s*)listen 127\.0\.0\.1:\d+ http2;$/m;
/** The discovery server block's listen line (HTTP/1.1). */
const HTTP_LISTEN = /^(\s*)listen 127\.0\.0\.1:\d+;$/m;
/** Where the shipped file's discovery part begins; it runs to the end of the file. */
const DISCOVERY_PART = '# OpenID discovery and the JWK Set';

/** The discovery part's replicas and listen port; absent, that part is cut out (no replica serves it). */
export interface NginxDiscovery {
  readonly upstreamPorts: readonly number[];
  readonly listenPort: number;
}

/** `part` with its one upstream's replica lines replaced by one per port (keeping the shipped parameters) and its `listen` port. */
function placePorts(part: string, listen: RegExp, upstreamPorts: readonly number[], listenPort: number, what: string): string {
  const first = [...part.matchAll(UPSTREAM_SERVER)][0];
  if (first === undefined || !listen.test(part)) {
    throw new Error(
      `${SHIPPED_NGINX_CONF}: expected \`server 127.0.0.1:PORT ...;\` lines in the ${what} upstream and one \`${listen.source}\``,
    );
  }
  const lines = upstreamPorts.map((port) => `${first[1]}server 127.0.0.1:${port}${first[2] ?? ''};\n`).join('');
  let placed = false;
  return part
    .replace(UPSTREAM_SERVER, () => (placed ? '' : ((placed = true), lines)))
    .replace(listen, (line: string, indent: string) => `${indent}${line.trim().replace(/:\d+/, `:${listenPort}`)}`);
}

/**
 * The shipped configuration with its replica lines replaced by one per `upstreamPorts`
 * and its listen port by `listenPort`, and the same in its discovery part (or that part
 * cut out); throws when the shipped file no longer has the shape this relies on, so a
 * test never runs a configuration other than the shipped one without saying so.
 */
export function nginxConfigFor(shipped: string, upstreamPorts: readonly number[], listenPort: number, discovery?: NginxDiscovery): string {
  const at = shipped.indexOf(DISCOVERY_PART);
  if (at === -1) throw new Error(`${SHIPPED_NGINX_CONF}: expected its discovery part to begin with \`${DISCOVERY_PART}\``);
  const grpc = placePorts(shipped.slice(0, at), LISTEN, upstreamPorts, listenPort, 'gRPC');
  if (discovery === undefined) return grpc;
  return grpc + placePorts(shipped.slice(at), HTTP_LISTEN, discovery.upstreamPorts, discovery.listenPort, 'discovery');
}

/**
 * The main configuration around the snippet. The temporary paths are nginx's compiled-in
 * ones under /var/lib/nginx otherwise, which an unprivileged nginx cannot create.
 */
function mainConfig(dir: string, snippet: string, workerProcesses: number): string {
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `    ${kind}_temp_path ${join(dir, `${kind}_temp`)};`);
  return [
    `worker_processes ${workerProcesses};`,
    'events { worker_connections 4096; }',
    'http {',
    '    access_log off;',
    ...temp,
    `    include ${snippet};`,
    '}',
    '',
  ].join('\n');
}

export interface NginxOptions {
  /** nginx worker processes. Default 1. */
  readonly workerProcesses?: number;
  /** CPUs to pin nginx to (taskset); none: unpinned. */
  readonly cpus?: readonly number[];
  /** Default 10 s. */
  readonly timeoutMs?: number;
  /** Pass the replicas' discovery ports through too, on `listenPort` (chosen by the caller: the replicas' --issuer names it). */
  readonly discovery?: NginxDiscovery;
}

/** A running nginx: its master process, the port it proxies on, and the configuration it runs. */
export interface NginxProxy extends ServerProcess {
  /** The snippet as run: the shipped file with the given upstreams and port. */
  readonly config: string;
  /** Removes the temporary prefix (after the process has exited). */
  removeFiles(): void;
}

/** nginx's notice line once its listening sockets are open and a worker serves them (group 1: the worker's pid). */
const WORKER_STARTED = /start worker process (\d+)/;

/**
 * Starts nginx with the shipped configuration in front of `upstreamPorts` (127.0.0.1),
 * resolving once its workers run. A port taken between choosing it and nginx binding it
 * (another process on the machine) is retried once with another.
 */
export async function startNginx(upstreamPorts: readonly number[], options: NginxOptions = {}): Promise<NginxProxy> {
  const nginx = requireNginx();
  const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-nginx-'));
  // Started as root, nginx's workers run as `nobody`: they must reach the prefix.
  chmodSync(dir, 0o755);
  const shipped = readFileSync(SHIPPED_NGINX_CONF, 'utf8');
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const config = nginxConfigFor(shipped, upstreamPorts, port, options.discovery);
    const snippet = join(dir, 'jwt-grpc.conf');
    writeFileSync(snippet, config);
    writeFileSync(join(dir, 'nginx.conf'), mainConfig(dir, snippet, options.workerProcesses ?? 1));
    const { command, args } = tasksetCommand(options.cpus ?? [], nginx, [
      '-p',
      dir,
      '-c',
      join(dir, 'nginx.conf'),
      '-e',
      'stderr',
      '-g',
      `daemon off; pid ${join(dir, 'nginx.pid')}; error_log stderr notice;`,
    ]);
    const proc = launch(command, args, { childLine: WORKER_STARTED });
    try {
      await proc.waitFor('stderr', WORKER_STARTED, options.timeoutMs ?? 10_000);
      return extend(proc, { port, config, removeFiles: () => rmSync(dir, { recursive: true, force: true }) });
    } catch (error) {
      proc.kill();
      await proc.closed;
      if (attempt === 1 && /Address already in use/.test(proc.stderr)) continue;
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`nginx did not start: ${(error as Error).message}`);
    }
  }
}
