import { type TrustFile, loadTrust } from '../exchange/trust.js';
import type { Buffer } from 'node:buffer';
import { access, readFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import nodeCluster from 'node:cluster';
import { createServer } from 'node:net';
import { cannotListen } from '../base/address.js';
import { JwtGrpcError } from '../base/errors.js';
import { loadKeys } from '../keys/load.js';
import { setPkcs11ModuleDirs } from '../keys/backends/pkcs11-custody.js';
import { watchKeyFile } from '../keys/watch.js';
import { type Logger, createStderrLogger } from '../base/log.js';
import { readSecretFile } from '../base/secret-file.js';
import { type ClusterHandle, runCluster } from '../cluster/run.js';
import { optionValue } from '../options/resolve.js';
import { OPTIONS, PROTOCOLS } from '../options/table.js';
import { loadSubjects } from '../jwt-service/load-subjects.js';
import { loadPolicy } from '../policy/load.js';
import { policyDigest } from '../policy/reload.js';
import type { ServerTlsOptions } from '../contracts/handler-api.js';
import type { ServeArgs } from './args.js';
import { endWithParent, launchedByNpmExec } from './parent-watch.js';
import { nodeTls } from '../base/optional-deps.js';
import { giveWorkersServeV8Flags } from './v8-flags.js';

function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** A PEM that holds a private key: the only kind whose file is checked for who may read it. */
const holdsPrivateKey = (pem: Buffer): boolean => pem.includes('PRIVATE KEY');

async function readPem(file: string, what: string, logger?: Logger): Promise<Buffer> {
  try {
    return logger === undefined ? await readFile(file) : await readSecretFile(file, what, logger, holdsPrivateKey);
  } catch (err) {
    throw new JwtGrpcError('ERR_FILE', `cannot read ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`, { field: file });
  }
}

function tlsOptions(cli: ServeArgs['cli'], logger: Logger): (() => Promise<ServerTlsOptions>) | undefined {
  const { tlsCert, tlsKey, tlsClientCa } = cli;
  if (tlsCert === undefined || tlsKey === undefined) return undefined;
  return async () => {
    const [cert, key, ca] = await Promise.all([
      readPem(tlsCert, 'TLS certificate'),
      readPem(tlsKey, 'TLS private key', logger),
      tlsClientCa === undefined ? null : readPem(tlsClientCa, 'client CA bundle'),
    ]);
    return ca === null ? { cert, key } : { cert, key, ca, requireClientCertificate: true };
  };
}

/** The PEM block each TLS flag's file must hold: a file that is not PEM fails here, named, not in OpenSSL's words. */
const PEM_BLOCKS = {
  '--tls-cert': { what: 'a PEM certificate', begins: /-----BEGIN CERTIFICATE-----/, line: '-----BEGIN CERTIFICATE-----' },
  '--tls-key': { what: 'a PEM private key', begins: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/, line: '-----BEGIN ... PRIVATE KEY-----' },
  '--tls-client-ca': { what: 'a PEM CA certificate', begins: /-----BEGIN CERTIFICATE-----/, line: '-----BEGIN CERTIFICATE-----' },
} as const;

/**
 * The TLS files as Node would load them, checked at start: each holds the PEM its flag
 * needs, and the certificate and key make a pair. Every failure is one line naming the flag
 * and the file (OpenSSL's reason at most, never a byte of the key).
 */
async function checkTlsFiles(cli: ServeArgs['cli']): Promise<void> {
  const { tlsCert, tlsKey, tlsClientCa } = cli;
  if (tlsCert === undefined || tlsKey === undefined) return;
  const given = { '--tls-cert': tlsCert, '--tls-key': tlsKey, '--tls-client-ca': tlsClientCa } as const;
  const pem: Partial<Record<keyof typeof given, Buffer>> = {};
  for (const [flag, file] of Object.entries(given) as [keyof typeof given, string | undefined][]) {
    if (file === undefined) continue;
    const text = await readFile(file);
    if (!PEM_BLOCKS[flag].begins.test(text.toString('latin1'))) {
      throw new JwtGrpcError('ERR_FILE', `${flag}: ${file} is not ${PEM_BLOCKS[flag].what} (no ${PEM_BLOCKS[flag].line} line)`, {
        field: flag,
      });
    }
    pem[flag] = text;
  }
  try {
    nodeTls().createSecureContext({
      cert: pem['--tls-cert'],
      key: pem['--tls-key'],
      ...(pem['--tls-client-ca'] === undefined ? {} : { ca: pem['--tls-client-ca'] }),
    });
  } catch (err) {
    const reason = (err as Error).message.replace(/^error:[0-9A-F]+:/, '');
    throw new JwtGrpcError(
      'ERR_FILE',
      `--tls-cert/--tls-key: ${tlsCert} and ${tlsKey} are not a certificate and its private key (${reason})`,
      { field: '--tls-cert' },
    );
  }
}

/**
 * Fails in the primary, with one clear message, on files every worker would fail to read;
 * warns once, there, about a secret file (`secret` says what it holds) open to group, others
 * or another user (the workers, reading the same files, do not repeat it).
 */
async function checkReadable(
  files: readonly { readonly file: string | undefined; readonly secret?: string }[],
  logger: Logger,
): Promise<void> {
  for (const { file, secret } of files) {
    if (file === undefined) continue;
    try {
      if (secret === undefined) await access(file, constants.R_OK);
      else await readSecretFile(file, secret, logger, secret === 'TLS private key' ? holdsPrivateKey : () => true);
    } catch (err) {
      throw new JwtGrpcError('ERR_FILE', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`, { field: file });
    }
  }
}

/**
 * The gRPC port, tried before any key is generated or loaded: a port in use is then the one
 * line a start prints, not one after the ephemeral-keys warning. The bind that follows still
 * decides (another process may take the port in between), and says so in the same words.
 */
async function checkPortFree(host: string, port: number): Promise<void> {
  if (port === 0 || nodeCluster.isWorker) return;
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
    });
  } catch (err) {
    throw cannotListen(hostPort(host, port), err as Error);
  }
}

/** What every JSON log line of this process says about it: the worker's slot, or `primary`. */
function processBindings(workers: number): Record<string, unknown> {
  if (nodeCluster.isWorker) return { worker: Number(process.env['JWT_GRPC_WORKER']) };
  return workers > 1 ? { worker: 'primary' } : {};
}

/** `jwt-grpc serve`: single process or cluster (NODEMAXPROCS), announced on stdout. */
export async function serve(args: ServeArgs): Promise<ClusterHandle> {
  const { cli, cluster, server, files } = args;
  const logger = createStderrLogger({ level: cli.logLevel, format: cli.logFormat, bindings: processBindings(cluster.workers) });
  // In every process: a cluster worker loads the PKCS#11 modules of its own sessions.
  setPkcs11ModuleDirs(cli.pkcs11ModuleDirs);
  await checkReadable(
    [
      { file: cli.tlsCert },
      { file: cli.tlsKey, secret: 'TLS private key' },
      { file: cli.tlsClientCa },
      { file: server.adminTokenFile, secret: 'admin token file' },
      { file: server.trustFile },
    ],
    logger,
  );
  // Checked once before anything starts, so that a broken trust file stops serve with one line naming the entry (each process reads it again at listen).
  const trust = server.trustFile !== undefined && nodeCluster.isPrimary ? await loadTrust(server.trustFile) : undefined;
  await checkTlsFiles(cli);
  await checkPortFree(cli.host, cli.port);
  const subjects = files.subjects === undefined ? undefined : await loadSubjects(files.subjects);
  const keysFile = files.keys;
  const policyFile = files.policy;
  if (nodeCluster.isPrimary) giveWorkersServeV8Flags();
  const handle = await runCluster({
    ...cluster,
    address: hostPort(cli.host, cli.port),
    keys: keysFile === undefined ? undefined : () => loadKeys(keysFile, { logger, keyBackendTimeoutMs: server.keyBackendTimeoutMs }),
    // Read by the primary (or the single process), at start and on each reload; workers get it over IPC.
    policy: policyFile === undefined ? undefined : () => loadPolicy(policyFile),
    tls: tlsOptions(cli, logger),
    logger,
    server: { ...server, subjects },
  });
  const policy = handle.policy;
  if (handle.role !== 'worker' && policy === undefined) {
    logger.warn('no --policy: OPEN MODE, any caller that reaches this port may get a token for any subject and audience (docs/policy.md)');
  }
  if (handle.role !== 'worker' && cli.watchKeys) await watchFiles(handle, files, logger);
  if (handle.role !== 'worker') {
    // Only a server that traces loads the tracing module (and names its exporter, endpoint and sampler).
    const tracing =
      server.tracing === true ? (await import('../tracing/sdk.js')).describeTracingFromEnv(process.env) : 'off (--otel turns it on)';
    // The last line: the drain is over (a `kill %1; wait %1` would otherwise end in silence).
    void handle.done.then((code) => logger.info(`stopped (exit ${code})`));
    if (cli.exitWithParent || launchedByNpmExec(process.env)) {
      const why = cli.exitWithParent ? '--exit-with-parent' : 'started by npx';
      const stopWatching = endWithParent((parentPid) => logger.warn(`parent process ${parentPid} exited (${why}): draining`));
      void handle.done.then(stopWatching);
    }
    process.stdout.write(startBanner(args, handle, { subjects, tracing, trust }));
  }
  return handle;
}

/** Each change of the key file or the policy file reloads what it holds, as SIGHUP does, until the server is done. */
async function watchFiles(handle: ClusterHandle, files: ServeArgs['files'], logger: Logger): Promise<void> {
  const watched = [
    ...(files.keys === undefined ? [] : [{ file: files.keys, what: 'key file', reload: () => handle.reloadKeys() }]),
    ...(files.policy === undefined ? [] : [{ file: files.policy, what: 'policy file', reload: () => handle.reloadPolicy() }]),
  ];
  for (const { file, what, reload } of watched) {
    const stop = await watchKeyFile(
      file,
      () => {
        logger.info(`${what} ${file} changed: reloading it`);
        reload().catch(() => undefined); // logged (and counted) by the reload
      },
      logger,
    );
    void handle.done.then(stop);
  }
}

/** The lines `serve` announces on stdout once it listens: where, how, with which keys, policy and options. */
/** What the start banner names beside the handle: the subjects file's, the tracing set-up, the trust file read before the start. */
interface BannerFacts {
  readonly subjects: readonly string[] | undefined;
  readonly tracing: string;
  readonly trust: TrustFile | undefined;
}

function startBanner(args: ServeArgs, handle: ClusterHandle, { subjects, tracing, trust }: BannerFacts): string {
  const { cli, cluster, server, files } = args;
  const keysFile = files.keys;
  const policyFile = files.policy;
  const policy = handle.policy;
  const keys = handle.keys.keys;
  return [
    `jwt-grpc listening on ${hostPort(cli.host, handle.port)}`,
    `  transport: ${cli.tlsCert === undefined ? 'plaintext (no TLS)' : cli.tlsClientCa === undefined ? 'TLS' : 'mutual TLS'}, ${optionValue('transport', server.transport)} server`,
    `  protocols: ${describeProtocols(server)}`,
    `  workers: ${handle.role === 'single' ? '1 (single process)' : cluster.workers} pids ${handle.servingPids().join(', ')}`,
    // The primary is the process to signal: name it.
    ...(handle.role === 'single' ? [] : [`  primary: pid ${process.pid} (SIGHUP reloads the keys and the policy, SIGTERM drains)`]),
    `  algorithms: ${handle.keys.signingAlgorithms.join(', ')}`,
    `  kids: ${keys.map((key) => `${key.kid}${key.active ? '' : ' (verify only)'}`).join(', ')}`,
    `  keys: ${keysFile === undefined ? 'ephemeral' : `${keysFile}, reloaded on SIGHUP${cli.watchKeys ? ' and when it changes' : ''}`}`,
    ...(handle.metricsPort === undefined ? [] : [`  metrics: http://${hostPort(cli.host, handle.metricsPort)}/metrics`]),
    ...(handle.httpPort === undefined
      ? []
      : [
          `  discovery: ${cli.tlsCert === undefined ? 'http' : 'https'}://${hostPort(server.httpHost ?? cli.host, handle.httpPort)}/.well-known/openid-configuration (issuer ${server.issuer})`,
        ]),
    `  revocations: ${describeRevocations(server, policy?.revokers?.length ?? 0)}`,
    `  policy: ${policy === undefined ? 'none (open: any caller may get any token)' : `${Object.keys(policy.callers).length} callers from ${policyFile} (${policyDigest(policy)}), reloaded on SIGHUP${cli.watchKeys ? ' and when it changes' : ''}`}`,
    `  token exchange: ${describeExchange(trust, server.trustFile, handle.httpPort !== undefined)}`,
    `  tracing: ${tracing}`,
    `  subjects: ${subjects === undefined ? 'none (requests must name one)' : `${subjects.length} from ${files.subjects}`}`,
    '',
  ].join('\n');
}

/** The start banner's protocols line: what the gRPC port answers, and which browser origins may call it. */
function describeProtocols(server: ServeArgs['server']): string {
  const protocols = server.protocols ?? (optionValue('transport', server.transport) === 'grpc-js' ? ['grpc'] : PROTOCOLS);
  const origins = server.corsAllowedOrigins ?? [];
  return `${protocols.join(', ')}; CORS ${origins.length === 0 ? 'off (no --cors-origins)' : `for ${origins.join(', ')}`}`;
}

/** The start banner's token exchange line: whose tokens, from which file, and where it is asked. */
function describeExchange(trust: TrustFile | undefined, file: string | undefined, tokenEndpoint: boolean): string {
  if (trust === undefined) return 'off (--trust-file turns it on)';
  const issuers = Object.keys(trust.issuers ?? {}).length;
  const whose = [...(trust.self === undefined ? [] : ['its own tokens']), ...(issuers === 0 ? [] : [`${issuers} other issuers'`])];
  return `${whose.join(' and ')} from ${file}, by ExchangeToken${tokenEndpoint ? ' and POST /token' : ''}`;
}

/** The start banner's revocation line: where they are kept, and who may revoke. */
function describeRevocations(server: ServeArgs['server'], revokers: number): string {
  const kept =
    server.revocations !== undefined
      ? `file ${server.revocations}`
      : server.revocationStore !== undefined
        ? OPTIONS.revocationStore.kind.show(server.revocationStore) // a URL's password is masked
        : 'in memory only';
  const who = [
    ...(server.adminTokenFile === undefined ? [] : ['admin secret']),
    ...(revokers === 0 ? [] : [`${revokers} policy revokers`]),
  ];
  return `${kept}; RevokeJwt ${who.length === 0 ? 'off (no --admin-token-file, no revokers)' : `for ${who.join(', ')}`}; jti ${server.jti === false ? 'off (--no-jti)' : 'on'}`;
}
