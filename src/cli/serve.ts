import { access, readFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { ServerCredentials } from '@grpc/grpc-js';
import { JwtGrpcError } from '../errors.js';
import { loadKeys } from '../keys/load.js';
import { createStderrLogger } from '../log.js';
import { parseNodeMaxProcs } from '../cluster/max-procs.js';
import { type ClusterHandle, runCluster } from '../cluster/run.js';
import { loadSubjects } from '../service/load-subjects.js';
import type { ServeArgs } from './args.js';

function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

async function readPem(file: string, what: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (err) {
    throw new JwtGrpcError('ERR_FILE', `cannot read ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`, { field: file });
  }
}

function tlsCredentials(args: ServeArgs): (() => Promise<ServerCredentials>) | undefined {
  const { tlsCert, tlsKey, tlsClientCa } = args;
  if (tlsCert === undefined || tlsKey === undefined) return undefined;
  return async () => {
    const [cert, key, ca] = await Promise.all([
      readPem(tlsCert, 'TLS certificate'),
      readPem(tlsKey, 'TLS key'),
      tlsClientCa === undefined ? null : readPem(tlsClientCa, 'client CA bundle'),
    ]);
    return ServerCredentials.createSsl(ca, [{ cert_chain: cert, private_key: key }], ca !== null);
  };
}

/** Fails in the primary, with one clear message, on files every worker would fail to read. */
async function checkReadable(files: readonly (string | undefined)[]): Promise<void> {
  for (const file of files) {
    if (file === undefined) continue;
    try {
      await access(file, constants.R_OK);
    } catch (err) {
      throw new JwtGrpcError('ERR_FILE', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`, { field: file });
    }
  }
}

/** `jwt-grpc serve`: single process or cluster (NODEMAXPROCS), announced on stdout. */
export async function serve(args: ServeArgs, env: NodeJS.ProcessEnv): Promise<ClusterHandle> {
  const workers = parseNodeMaxProcs(env['NODEMAXPROCS']);
  const logger = createStderrLogger('info');
  await checkReadable([args.tlsCert, args.tlsKey, args.tlsClientCa]);
  const subjects = args.subjectsFile === undefined ? undefined : await loadSubjects(args.subjectsFile);
  const keysFile = args.keysFile;
  const handle = await runCluster({
    workers,
    address: hostPort(args.host, args.port),
    keys: keysFile === undefined ? undefined : () => loadKeys(keysFile, { logger }),
    credentials: tlsCredentials(args),
    logger,
    graceMs: args.graceMs,
    server: {
      subjects,
      issuer: args.issuer,
      defaultTtlSeconds: args.ttlSeconds,
      maxTtlSeconds: args.maxTtlSeconds,
      reflection: args.reflection,
      health: args.health,
      maxConnectionAgeMs: args.maxConnectionAgeMs,
      verifyCache: args.verifyCacheEntries === 0 ? false : { maxEntries: args.verifyCacheEntries },
    },
  });
  if (handle.role !== 'worker') {
    const keys = handle.keys.keys;
    process.stdout.write(
      [
        `jwt-grpc listening on ${hostPort(args.host, handle.port)}`,
        `  transport: ${args.tlsCert === undefined ? 'plaintext (no TLS)' : args.tlsClientCa === undefined ? 'TLS' : 'mutual TLS'}`,
        `  workers: ${handle.role === 'single' ? '1 (single process)' : workers} pids ${handle.servingPids().join(', ')}`,
        `  algorithms: ${handle.keys.signingAlgorithms.join(', ')}`,
        `  kids: ${keys.map((key) => `${key.kid}${key.active ? '' : ' (verify only)'}`).join(', ')}`,
        `  subjects: ${subjects === undefined ? 'none (requests must name one)' : `${subjects.length} from ${args.subjectsFile}`}`,
        '',
      ].join('\n'),
    );
  }
  return handle;
}
