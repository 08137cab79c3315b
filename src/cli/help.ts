import { SERVE_OPTIONS } from './args.js';

/** The text of `jwt-grpc --help`, built from the same table the parser uses. */
export function helpText(version: string): string {
  const rows = Object.entries(SERVE_OPTIONS).map(([name, option]) => {
    const flag = `--${name}${option.type === 'string' ? ' VALUE' : ''}`;
    return `  ${flag.padEnd(30)} ${option.help}\n  ${''.padEnd(30)} env: ${option.env}${option.type === 'boolean' ? '=1' : ''}`;
  });
  return [
    `jwt-grpc ${version}: sign and verify JSON Web Tokens as a gRPC service (jwt.services.JwtService)`,
    '',
    'Usage:',
    '  jwt-grpc serve [options]   run the server',
    '  jwt-grpc --help            this text',
    '  jwt-grpc --version         the version',
    '',
    'Options of serve (flags win over their environment twins):',
    ...rows,
    '',
    'Cluster mode:',
    '  NODEMAXPROCS=N            run a primary and N worker processes on one port ("max" = one per core;',
    '                            unset or 1 = a single process)',
    '',
    'Exit codes: 0 after a clean shutdown (SIGTERM/SIGINT drain calls in flight; a second signal forces),',
    '1 when the server cannot start or its workers crash in a loop, 2 for a bad option.',
    '',
  ].join('\n');
}
