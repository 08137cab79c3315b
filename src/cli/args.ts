import { parseArgs } from 'node:util';
import { invalidOption } from '../base/errors.js';
import { text } from '../options/kinds.js';
import { type OptionNames, nearestName, refuseUnknownOptions } from '../base/known-options.js';
import { type ResolvedOptions, cliLabel, namesIn, resolveOptions } from '../options/resolve.js';
import { type CliSpec, OPTIONS, type OptionName, type OptionRow } from '../options/table.js';
import { type JwtServerOptions, resolveServerOptions } from '../server/options.js';
import { type ClientCommandArgs, parseClientArgs } from './client-args.js';
import { type KeysArgs, parseKeysArgs } from './keys-args.js';
import { joinNegativeValues } from './negative-values.js';
import { parseArgsError, unknownCommand } from './parse-errors.js';
import { internalError } from '../base/assert.js';
import { PKCS11_PIN_ENV } from '../keys/backends/pkcs11.js';

/** `jwt-grpc serve`'s options after parsing, sorted by where they go. */
export interface ServeArgs {
  /** The command line's own options (host, port, TLS files), defaults filled in. */
  readonly cli: ResolvedOptions<'cli'>;
  /** The cluster's (workers from NODEMAXPROCS, graceMs), defaults filled in. */
  readonly cluster: ResolvedOptions<'cluster'>;
  /** Each server's options as given; the library fills in the others' defaults. */
  readonly server: Omit<JwtServerOptions, 'keys' | 'subjects' | 'policy' | 'logger'>;
  /** Files that hold option values, read at start (`--keys`, `--subjects`, `--policy`). */
  readonly files: { readonly keys?: string; readonly subjects?: string; readonly policy?: string };
}

export type Command =
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  | { readonly kind: 'serve'; readonly args: ServeArgs }
  | { readonly kind: 'keys'; readonly args: KeysArgs }
  | { readonly kind: 'client'; readonly args: ClientCommandArgs };

/** Every option the command line gives (each row of the table with `cli`), its own first: the order of --help. */
export const CLI_OPTIONS: readonly OptionName[] = [
  ...namesIn('cli'),
  ...(Object.keys(OPTIONS) as OptionName[]).filter((name) => OPTIONS[name].group !== 'cli'),
].filter((name) => OPTIONS[name].cli !== undefined);

/** A flag that takes no value (`--no-health`): its kind has no placeholder and it names no file. */
export function isSwitch(row: OptionRow): boolean {
  return row.kind.placeholder === '' && row.cli?.file !== true;
}

const FILE = text('FILE');

/** One option's value from its flag, else from its environment twin (empty means unset). */
function readOption(name: OptionName, flags: Readonly<Record<string, string | boolean | undefined>>, env: NodeJS.ProcessEnv): unknown {
  const row: OptionRow = OPTIONS[name];
  const cli = row.cli as CliSpec;
  const fromFlag = cli.flag === undefined ? undefined : flags[cli.flag];
  const fromEnv = env[cli.env] === '' ? undefined : env[cli.env];
  const given = fromFlag ?? fromEnv;
  // A bad value is reported by where it came from: the flag, or the variable that set it.
  const label = fromFlag === undefined ? cli.env : cliLabel(name);
  if (given === undefined) return undefined;
  if (typeof given === 'boolean') return cli.negate === true ? !given : given;
  if (cli.file === true) return FILE.parse(given, label);
  if (row.kind.parse === undefined) throw internalError(`option table: ${name} has a command-line form but its kind reads no text`);
  const value = row.kind.parse(given, label);
  return cli.negate === true ? !value : value;
}

/**
 * The environment variables `serve` reads: every option's twin, the worker number the
 * cluster's primary sets, and the PIN of PKCS#11 keys whose URI has no pin-source.
 */
const SERVE_VARIABLES: OptionNames = [
  ...CLI_OPTIONS.map((name) => (OPTIONS[name].cli as CliSpec).env),
  'JWT_GRPC_WORKER',
  'JWT_GRPC_SPARE',
  PKCS11_PIN_ENV,
];

/**
 * A `JWT_GRPC_` variable `serve` does not read is a misspelt or retired option
 * (`JWT_GRPC_ISUER`, and tokens would carry no iss): refused, as an unknown flag is.
 */
function refuseUnknownVariables(env: NodeJS.ProcessEnv): void {
  const ours = Object.fromEntries(
    Object.keys(env)
      .filter((name) => name.startsWith('JWT_GRPC_'))
      .map((name) => [name, true]),
  );
  refuseUnknownOptions(ours, SERVE_VARIABLES, { owner: 'jwt-grpc serve', noun: 'an environment variable', elsewhere: nearestVariable });
}

/** The hint, compared after the shared prefix (else every short name would be near every other). */
function nearestVariable(name: string): string {
  const suffix = (variable: string): string => variable.slice('JWT_GRPC_'.length);
  const nearest = nearestName(suffix(name), SERVE_VARIABLES.map(suffix));
  return nearest === undefined ? 'jwt-grpc --help lists them' : `did you mean JWT_GRPC_${nearest}?`;
}

/** The commands, for the suggestion when one is misspelt. */
const COMMANDS = ['serve', 'keys', 'token', 'verify', 'revoke', 'help', 'version'];

/**
 * Parses argv (without node and the script) and the environment into a command, through
 * the option table: the same bounds and rules as the library, errors naming the flag.
 * Flags win over environment variables. Throws `ERR_INVALID_OPTION` for anything
 * unknown or bad.
 */
export function parseCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Command {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') return { kind: 'help' };
  if (command === '--version' || command === '-v' || command === 'version') return { kind: 'version' };
  if (command === 'keys') return { kind: 'keys', args: parseKeysArgs(rest, env) };
  if (command === 'token' || command === 'verify' || command === 'revoke') return { kind: 'client', args: parseClientArgs(command, rest) };
  if (command !== 'serve') throw unknownCommand(command, COMMANDS, 'command');

  const flagTypes: Record<string, { type: 'string' | 'boolean' }> = { help: { type: 'boolean' } };
  for (const name of CLI_OPTIONS) {
    const row: OptionRow = OPTIONS[name];
    if (row.cli?.flag !== undefined) flagTypes[row.cli.flag] = { type: isSwitch(row) ? 'boolean' : 'string' };
  }
  let flags: Record<string, string | boolean | undefined>;
  try {
    flags = parseArgs({ args: joinNegativeValues(rest, flagTypes), options: flagTypes, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw parseArgsError(err, Object.keys(flagTypes), 'jwt-grpc serve');
  }
  if (flags['help'] === true) return { kind: 'help' };
  refuseUnknownVariables(env);

  const sorted: Record<'cli' | 'cluster' | 'server' | 'files', Record<string, unknown>> = { cli: {}, cluster: {}, server: {}, files: {} };
  for (const name of CLI_OPTIONS) {
    const value = readOption(name, flags, env);
    if (value === undefined) continue;
    const { group, cli } = OPTIONS[name] as OptionRow;
    const place = cli?.file === true ? 'files' : group === 'cli' || group === 'cluster' ? group : 'server';
    sorted[place][name] = value;
  }

  const own = resolveOptions('cli', sorted.cli, cliLabel);
  if ((own.tlsCert === undefined) !== (own.tlsKey === undefined)) throw invalidOption('--tls-cert/--tls-key', 'give both or neither');
  if (own.tlsClientCa !== undefined && own.tlsCert === undefined) throw invalidOption('--tls-client-ca', 'needs --tls-cert and --tls-key');
  if (sorted.files['policy'] !== undefined && own.tlsClientCa === undefined) {
    // A policy names callers by their client certificate: without mutual TLS no caller has one, and every GenerateJwt would be refused.
    throw invalidOption(
      '--policy',
      'needs mutual TLS, --tls-cert, --tls-key and --tls-client-ca: it names callers by their client certificate, and without one every GenerateJwt is refused (docs/policy.md)',
    );
  }
  if (own.watchKeys && sorted.files['keys'] === undefined && sorted.files['policy'] === undefined) {
    throw invalidOption('--watch-keys', 'needs --keys or --policy: there is no file to watch');
  }
  // The library's rules across options (--ttl at most --max-ttl), checked now, naming the flags.
  resolveServerOptions(sorted.server, { label: cliLabel });
  return {
    kind: 'serve',
    // Each value came through its row's kind, so it has the type its option declares.
    args: {
      cli: own,
      cluster: resolveOptions('cluster', sorted.cluster, cliLabel),
      server: sorted.server as ServeArgs['server'],
      files: sorted.files as ServeArgs['files'],
    },
  };
}
