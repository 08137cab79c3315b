import type { Buffer } from 'node:buffer';
import { readFile } from 'node:fs/promises';
import { type ChannelCredentials, type ChannelOptions, credentials } from '@grpc/grpc-js';
import { JwtGrpcError, invalidOption } from '../base/errors.js';
import { type Logger, createStderrLogger } from '../base/log.js';
import { readSecretFile } from '../base/secret-file.js';

/** How a command-line client reaches its server: `serve`'s TLS options, from the other side. */
export interface ClientTlsOptions {
  /** Use TLS, trusting the system's CAs. Implied by every option below. */
  readonly tls?: boolean;
  /** PEM CA bundle to trust instead of the system's (`--tls-ca`). */
  readonly tlsCa?: string;
  /** PEM client certificate chain, for mutual TLS (`--tls-cert`, with `--tls-key`). */
  readonly tlsCert?: string;
  /** PEM private key of `tlsCert` (`--tls-key`). */
  readonly tlsKey?: string;
  /** Name to check the server's certificate against, when the target is an address (`--tls-server-name`). */
  readonly tlsServerName?: string;
}

/** A PEM that holds a private key: the only kind whose file is checked for who may read it. */
const holdsPrivateKey = (pem: Buffer): boolean => pem.includes('PRIVATE KEY');

async function readPem(file: string, what: string, logger?: Pick<Logger, 'warn'>): Promise<Buffer> {
  try {
    return logger === undefined ? await readFile(file) : await readSecretFile(file, what, logger, holdsPrivateKey);
  } catch (err) {
    throw new JwtGrpcError('ERR_FILE', `cannot read ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`, { field: file });
  }
}

/** Channel credentials and options for {@link createJwtClient} from file-based TLS options; plaintext when none is given. A client key file open to group, others or another user is warned about on `logger`. */
export async function clientTransport(
  options: ClientTlsOptions,
  logger: Pick<Logger, 'warn'> = createStderrLogger(),
): Promise<{ credentials: ChannelCredentials; channelOptions: ChannelOptions }> {
  const { tlsCa, tlsCert, tlsKey, tlsServerName } = options;
  if ((tlsCert === undefined) !== (tlsKey === undefined)) throw invalidOption('--tls-cert/--tls-key', 'give both or neither');
  const useTls = options.tls === true || tlsCa !== undefined || tlsCert !== undefined || tlsServerName !== undefined;
  if (!useTls) return { credentials: credentials.createInsecure(), channelOptions: {} };
  const [ca, cert, key] = await Promise.all([
    tlsCa === undefined ? null : readPem(tlsCa, 'CA bundle'),
    tlsCert === undefined ? null : readPem(tlsCert, 'client certificate'),
    tlsKey === undefined ? null : readPem(tlsKey, 'client private key', logger),
  ]);
  return {
    credentials: credentials.createSsl(ca, key, cert),
    channelOptions: tlsServerName === undefined ? {} : { 'grpc.ssl_target_name_override': tlsServerName },
  };
}
