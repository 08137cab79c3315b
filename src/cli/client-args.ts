/**
 * `jwt-grpc token`, `jwt-grpc verify` and `jwt-grpc revoke`: a JwtService client on the command line, with
 * `serve`'s TLS options seen from the other side. Their flags are parsed and documented
 * from one list.
 */
import { parseArgs } from 'node:util';
import type { RevokeCommandArgs, TokenCommandArgs, VerifyCommandArgs } from './client-commands.js';
import { invalidOption } from '../base/errors.js';
import { OPTIONS } from '../options/table.js';
import { joinNegativeValues } from './negative-values.js';
import { parseArgsError } from './parse-errors.js';

/** The client commands. */
export type ClientCommand = 'token' | 'verify' | 'revoke';

export type ClientCommandArgs =
  | { readonly action: 'help'; readonly command: ClientCommand }
  | { readonly action: 'token'; readonly args: TokenCommandArgs }
  | { readonly action: 'verify'; readonly args: VerifyCommandArgs }
  | { readonly action: 'revoke'; readonly args: RevokeCommandArgs };

interface FlagSpec {
  readonly type: 'string' | 'boolean';
  readonly usage: string;
  readonly help: string;
}

const TLS_FLAGS: Readonly<Record<string, FlagSpec>> = {
  tls: { type: 'boolean', usage: '--tls', help: "use TLS, trusting the system's CAs (implied by the flags below)" },
  'tls-ca': { type: 'string', usage: '--tls-ca FILE', help: "PEM CA bundle to trust instead of the system's" },
  'tls-cert': { type: 'string', usage: '--tls-cert FILE', help: 'PEM client certificate chain, for mutual TLS (with --tls-key)' },
  'tls-key': { type: 'string', usage: '--tls-key FILE', help: 'PEM private key of --tls-cert' },
  'tls-server-name': {
    type: 'string',
    usage: '--tls-server-name NAME',
    help: "name to check the server's certificate against when the target is an address",
  },
};

const FLAGS = {
  token: {
    target: { type: 'string', usage: '--target HOST:PORT', help: 'the issuer: any gRPC target (host:port, dns:///name:port)' },
    alg: { type: 'string', usage: '--alg ALG', help: 'the algorithm to sign with (HS256, ES256, ...)' },
    sub: { type: 'string', usage: '--sub SUBJECT', help: 'the sub claim' },
    aud: { type: 'string', usage: '--aud AUDIENCE', help: 'the aud claim (default: none)' },
    ttl: { type: 'string', usage: '--ttl SECONDS', help: "the token's lifetime (default: the issuer's)" },
    ...TLS_FLAGS,
  },
  verify: {
    target: { type: 'string', usage: '--target HOST:PORT', help: 'the issuer: any gRPC target (host:port, dns:///name:port)' },
    aud: { type: 'string', usage: '--aud AUDIENCE', help: "the audience the token's aud must contain (default: not checked)" },
    iss: { type: 'string', usage: '--iss ISSUER', help: "the issuer the token's iss must equal (default: not checked)" },
    ...TLS_FLAGS,
  },
  revoke: {
    target: { type: 'string', usage: '--target HOST:PORT', help: 'the issuer: any gRPC target (host:port, dns:///name:port)' },
    jti: { type: 'string', usage: '--jti JTI', help: "revoke by the token's jti instead of the token (with --exp)" },
    exp: { type: 'string', usage: '--exp UNIX', help: "the token's exp, seconds since the epoch (with --jti)" },
    reason: { type: 'string', usage: '--reason TEXT', help: "a note for the issuer's audit log" },
    'admin-token-file': {
      type: 'string',
      usage: '--admin-token-file FILE',
      help: "file holding the issuer's admin secret (else: a client certificate its policy lists as a revoker)",
    },
    'allow-plaintext-admin-token': {
      type: 'boolean',
      usage: '--allow-plaintext-admin-token',
      help: 'send the admin secret without TLS to a target that is not loopback (refused otherwise)',
    },
    ...TLS_FLAGS,
  },
} satisfies Record<ClientCommand, Record<string, FlagSpec>>;

const USAGE: Readonly<Record<ClientCommand, string>> = {
  token:
    '  jwt-grpc token --target HOST:PORT --alg ALG --sub SUBJECT [--aud AUDIENCE] [--ttl SECONDS] [TLS flags]\n      prints a token from the issuer (GenerateJwt)',
  verify:
    '  jwt-grpc verify --target HOST:PORT [--aud AUDIENCE] [--iss ISSUER] [TLS flags] TOKEN\n      prints the issuer\'s verdict as JSON (VerifyJwt): {"valid":true,"sub":...,"claims":{...}} or {"valid":false,"reason":...}',
  revoke:
    '  jwt-grpc revoke --target HOST:PORT [--admin-token-file FILE] [--reason TEXT] [TLS flags] TOKEN\n' +
    '  jwt-grpc revoke --target HOST:PORT [--admin-token-file FILE] [--reason TEXT] [TLS flags] --jti JTI --exp UNIX\n' +
    '      revokes a token until it expires (RevokeJwt) and prints {"revoked":true,"expires_at":...}',
};

const EXIT_CODES: Readonly<Record<ClientCommand, string>> = {
  token: 'Exit codes: 0 printed, 1 the call failed, 2 bad option.',
  verify: 'Exit codes: 0 valid, 1 not valid, or the call failed, 2 bad option.',
  revoke: 'Exit codes: 0 revoked, 1 the call failed (refused, bad token), 2 bad option.',
};

/** The help of `jwt-grpc token` or `jwt-grpc verify`. */
export function clientHelpText(command: ClientCommand): string {
  const flags: Readonly<Record<string, FlagSpec>> = FLAGS[command];
  return [
    'Usage:',
    USAGE[command],
    '',
    'Flags:',
    ...Object.values(flags).map((flag) => `  ${flag.usage.padEnd(24)} ${flag.help}`),
    '',
    EXIT_CODES[command],
    '',
  ].join('\n');
}

/** Parses `jwt-grpc token|verify ...` (argv after the command); throws `ERR_INVALID_OPTION` naming the flag. */
export function parseClientArgs(command: ClientCommand, argv: readonly string[]): ClientCommandArgs {
  const flags: Readonly<Record<string, FlagSpec>> = FLAGS[command];
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    const options = Object.fromEntries(Object.entries(flags).map(([name, flag]) => [name, { type: flag.type }]));
    parsed = parseArgs({
      args: joinNegativeValues(argv, options),
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: command !== 'token',
    });
  } catch (err) {
    throw parseArgsError(err, [...Object.keys(flags), 'help'], `jwt-grpc ${command}`);
  }
  const { values, positionals } = parsed;
  if (values['help'] === true) return { action: 'help', command };
  const text = (name: string): string | undefined => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const tls = {
    tls: values['tls'] === true,
    tlsCa: text('tls-ca'),
    tlsCert: text('tls-cert'),
    tlsKey: text('tls-key'),
    tlsServerName: text('tls-server-name'),
  };
  const target = text('target');
  if (target === undefined || target === '') throw invalidOption('--target', 'is required: the issuer, e.g. 127.0.0.1:50051');
  if (command === 'token') {
    const ttl = text('ttl');
    return {
      action: 'token',
      args: {
        ...tls,
        target,
        alg: text('alg') ?? '',
        sub: text('sub') ?? '',
        aud: text('aud'),
        ttlSeconds: ttl === undefined ? undefined : OPTIONS.maxTtlSeconds.kind.parse(ttl, '--ttl'),
      },
    };
  }
  if (command === 'revoke') {
    const exp = text('exp');
    const jti = text('jti');
    if (positionals.length > 1) throw invalidOption('TOKEN', `give at most one token to revoke, got ${positionals.length}`);
    if ((positionals.length === 1) === (jti !== undefined)) throw invalidOption('TOKEN/--jti', 'give a token, or --jti with --exp');
    if ((jti === undefined) !== (exp === undefined)) throw invalidOption('--jti/--exp', 'give both or neither');
    return {
      action: 'revoke',
      args: {
        ...tls,
        target,
        token: positionals[0],
        jti,
        exp: exp === undefined ? undefined : parseUnixSeconds(exp),
        reason: text('reason'),
        adminTokenFile: text('admin-token-file'),
        allowPlaintextAdminToken: values['allow-plaintext-admin-token'] === true,
      },
    };
  }
  if (positionals.length !== 1) throw invalidOption('TOKEN', `give exactly one token to verify, got ${positionals.length}`);
  return { action: 'verify', args: { ...tls, target, token: positionals[0] as string, aud: text('aud'), iss: text('iss') } };
}

/** `--exp`: whole seconds since the epoch. */
function parseUnixSeconds(text: string): number {
  if (!/^\d{1,15}$/.test(text.trim()))
    throw invalidOption('--exp', `must be whole seconds since the Unix epoch, got ${JSON.stringify(text)}`);
  return Number(text.trim());
}
