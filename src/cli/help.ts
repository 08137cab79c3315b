import { defaultText } from '../options/resolve.js';
import { type CliSpec, OPTIONS, type OptionName, type OptionRow } from '../options/table.js';
import { CLI_OPTIONS, isSwitch } from './args.js';
import { EXIT_CODES } from './exit-codes.js';

const COLUMN = 30;

/** The option's line(s): what it does, its default and range, and its environment twin. */
function describe(name: OptionName): string {
  const row: OptionRow = OPTIONS[name];
  const cli = row.cli as CliSpec;
  const placeholder = cli.file === true ? 'FILE' : row.kind.placeholder;
  const usage = cli.flag === undefined ? `${cli.env}=${placeholder}` : `--${cli.flag}${isSwitch(row) ? '' : ` ${placeholder}`}`;
  // A boolean's help starts with a verb; its switch turns it off.
  const help = cli.negate === true ? `do not ${row.help}` : row.help;
  const shown = row.default !== undefined && row.kind.showAsText !== undefined ? row.kind.showAsText(row.default) : defaultText(name);
  const notes =
    cli.negate === true ? [] : [row.default !== undefined || row.defaultText !== undefined ? `default ${shown}` : '', row.kind.range];
  const note = notes.filter((part) => part !== '').join('; ');
  const line = `  ${usage.padEnd(COLUMN)} ${help}${note === '' ? '' : ` (${note})`}`;
  return cli.flag === undefined ? line : `${line}\n  ${''.padEnd(COLUMN)} env: ${cli.env}${isSwitch(row) ? '=1' : ''}`;
}

/** The text of `jwt-grpc --help`, built from the option table the parser uses. */
export function helpText(version: string): string {
  const withFlag = CLI_OPTIONS.filter((name) => OPTIONS[name].cli?.flag !== undefined);
  const envOnly = CLI_OPTIONS.filter((name) => OPTIONS[name].cli?.flag === undefined);
  return [
    `jwt-grpc ${version}: sign and verify JSON Web Tokens as a gRPC service (jwt.services.JwtService)`,
    '',
    'Usage:',
    '  jwt-grpc serve [options]   run the server',
    '  jwt-grpc keys generate | rotate | public [flags]',
    "                             make a key file, rotate its keys in phases, print its public keys ('jwt-grpc keys --help')",
    '  jwt-grpc token --target HOST:PORT --alg ALG --sub SUBJECT [--aud AUDIENCE] [TLS flags]',
    "                             print a token from an issuer ('jwt-grpc token --help')",
    '  jwt-grpc verify --target HOST:PORT [TLS flags] TOKEN',
    "                             print an issuer's verdict on a token as JSON; exit 0 valid, 1 not ('jwt-grpc verify --help')",
    '  jwt-grpc revoke --target HOST:PORT [--admin-token-file FILE] [TLS flags] TOKEN | --jti JTI --exp UNIX',
    "                             revoke a token at an issuer until it expires ('jwt-grpc revoke --help')",
    '  jwt-grpc --help            this text',
    '  jwt-grpc --version         the version (also: jwt-grpc version)',
    '',
    'Options of serve (flags win over their environment twins):',
    ...withFlag.map(describe),
    '',
    'Set only in the environment:',
    ...envOnly.map(describe),
    '',
    'Signals: SIGTERM/SIGINT drain calls in flight (a second one forces); SIGHUP reloads the --keys file.',
    'Exit codes of serve:',
    ...EXIT_CODES.map(({ code, serve }) => `  ${code}  ${serve}`),
    '',
  ].join('\n');
}
