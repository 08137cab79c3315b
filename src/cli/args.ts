import { parseArgs } from 'node:util';
import { JwtGrpcError, invalidOption } from '../errors.js';

/** `jwt-grpc serve` options after parsing; each has an environment twin (see help.ts). */
export interface ServeArgs {
  readonly host: string;
  readonly port: number;
  readonly keysFile: string | undefined;
  readonly subjectsFile: string | undefined;
  readonly issuer: string | undefined;
  readonly ttlSeconds: number | undefined;
  readonly maxTtlSeconds: number | undefined;
  readonly tlsCert: string | undefined;
  readonly tlsKey: string | undefined;
  readonly tlsClientCa: string | undefined;
  readonly reflection: boolean;
  readonly health: boolean;
  readonly maxConnectionAgeMs: number | undefined;
  readonly verifyCacheEntries: number;
  readonly graceMs: number;
}

export type Command = { readonly kind: 'help' } | { readonly kind: 'version' } | { readonly kind: 'serve'; readonly args: ServeArgs };

/** Option name, its environment twin, and whether it takes a value: the one table both parsing and --help use. */
export const SERVE_OPTIONS = {
  host: { env: 'JWT_GRPC_HOST', type: 'string', help: 'address to bind (default 0.0.0.0)' },
  port: { env: 'JWT_GRPC_PORT', type: 'string', help: 'port to bind, 0 = any free port (default 50051)' },
  keys: { env: 'JWT_GRPC_KEYS', type: 'string', help: 'JWK Set file of signing keys (default: ephemeral keys, with a warning)' },
  subjects: { env: 'JWT_GRPC_SUBJECTS', type: 'string', help: 'JSON array of subjects used round robin when a request names none' },
  issuer: { env: 'JWT_GRPC_ISSUER', type: 'string', help: 'iss claim of every token' },
  ttl: { env: 'JWT_GRPC_TTL', type: 'string', help: 'default token lifetime in seconds (default 7200)' },
  'max-ttl': { env: 'JWT_GRPC_MAX_TTL', type: 'string', help: 'longest lifetime a request may ask for (default 86400)' },
  'tls-cert': { env: 'JWT_GRPC_TLS_CERT', type: 'string', help: 'PEM certificate chain: serve TLS (with --tls-key)' },
  'tls-key': { env: 'JWT_GRPC_TLS_KEY', type: 'string', help: 'PEM private key of --tls-cert' },
  'tls-client-ca': { env: 'JWT_GRPC_TLS_CLIENT_CA', type: 'string', help: 'PEM CA bundle: require client certificates (mutual TLS)' },
  'no-reflection': { env: 'JWT_GRPC_NO_REFLECTION', type: 'boolean', help: 'do not serve gRPC reflection' },
  'no-health': { env: 'JWT_GRPC_NO_HEALTH', type: 'boolean', help: 'do not serve grpc.health.v1.Health' },
  'max-connection-age-ms': {
    env: 'JWT_GRPC_MAX_CONNECTION_AGE_MS',
    type: 'string',
    help: 'close client connections after this long so clients rebalance over workers (default: never)',
  },
  'verify-cache': { env: 'JWT_GRPC_VERIFY_CACHE', type: 'string', help: 'entries of the VerifyJwt cache, 0 = off (default 10000)' },
  'grace-ms': { env: 'JWT_GRPC_GRACE_MS', type: 'string', help: 'on SIGTERM, how long calls in flight may finish (default 10000)' },
} as const;

type OptionName = keyof typeof SERVE_OPTIONS;

function integer(name: string, text: string | undefined, fallback: number | undefined, min: number, max: number): number | undefined {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text.trim()) || Number(text) < min || Number(text) > max) {
    throw invalidOption(`--${name}`, `must be an integer from ${min} to ${max}, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

function flag(name: string, value: string | boolean | undefined): boolean {
  if (value === undefined || typeof value === 'boolean') return value === true;
  if (/^(1|true|yes)$/i.test(value)) return true;
  if (/^(0|false|no|)$/i.test(value)) return false;
  throw invalidOption(name, `must be true or false, got ${JSON.stringify(value)}`);
}

/**
 * Parses argv (without node and the script) and the environment into a command. Flags
 * win over environment variables. Throws `ERR_INVALID_OPTION` for anything unknown or bad.
 */
export function parseCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Command {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') return { kind: 'help' };
  if (command === '--version' || command === '-v') return { kind: 'version' };
  if (command !== 'serve') throw new JwtGrpcError('ERR_INVALID_OPTION', `unknown command ${JSON.stringify(command)}`);

  let parsed: ReturnType<typeof parseArgs<{ options: typeof SERVE_OPTIONS & { help: { type: 'boolean' } } }>>;
  try {
    parsed = parseArgs({ args: [...rest], options: { ...SERVE_OPTIONS, help: { type: 'boolean' } }, strict: true, allowPositionals: false });
  } catch (err) {
    throw new JwtGrpcError('ERR_INVALID_OPTION', (err as Error).message);
  }
  if (parsed.values.help === true) return { kind: 'help' };
  const value = (name: OptionName): string | boolean | undefined => {
    const given = parsed.values[name];
    if (given !== undefined) return given;
    const fromEnv = env[SERVE_OPTIONS[name].env];
    return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
  };
  const text = (name: OptionName): string | undefined => {
    const v = value(name);
    return typeof v === 'string' ? v : undefined;
  };

  const tlsCert = text('tls-cert');
  const tlsKey = text('tls-key');
  if ((tlsCert === undefined) !== (tlsKey === undefined)) throw invalidOption('--tls-cert/--tls-key', 'give both or neither');
  const tlsClientCa = text('tls-client-ca');
  if (tlsClientCa !== undefined && tlsCert === undefined) throw invalidOption('--tls-client-ca', 'needs --tls-cert and --tls-key');

  return {
    kind: 'serve',
    args: {
      host: text('host') ?? '0.0.0.0',
      port: integer('port', text('port'), 50051, 0, 65535) as number,
      keysFile: text('keys'),
      subjectsFile: text('subjects'),
      issuer: text('issuer'),
      ttlSeconds: integer('ttl', text('ttl'), undefined, 1, 10 * 365 * 86_400),
      maxTtlSeconds: integer('max-ttl', text('max-ttl'), undefined, 1, 10 * 365 * 86_400),
      tlsCert,
      tlsKey,
      tlsClientCa,
      reflection: !flag('--no-reflection', value('no-reflection')),
      health: !flag('--no-health', value('no-health')),
      maxConnectionAgeMs: integer('max-connection-age-ms', text('max-connection-age-ms'), undefined, 1000, 2 ** 31 - 1),
      verifyCacheEntries: integer('verify-cache', text('verify-cache'), 10_000, 0, 10_000_000) as number,
      graceMs: integer('grace-ms', text('grace-ms'), 10_000, 0, 600_000) as number,
    },
  };
}
