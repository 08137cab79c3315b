/**
 * node:util parseArgs's refusals said as the CLI's other option errors are: the flag first,
 * then what to do (`option --prot: is not a flag of jwt-grpc serve; did you mean --port?`),
 * without Node's advice about positionals that start with `-`. Unknown commands get the same
 * suggestion.
 */
import { JwtGrpcError, invalidOption } from '../base/errors.js';
import { nearestName } from '../base/nearest-name.js';

/**
 * A parseArgs error of `command` (`jwt-grpc serve`) as an `ERR_INVALID_OPTION` naming the
 * flag: an unknown flag with the nearest of `flags` (names without dashes), a flag without
 * its value, a switch given one, an argument where only flags go; any other as Node words it,
 * after the command.
 *
 * @example
 * ```ts
 * try {
 *   parseArgs({ args: ['--prot', '1'], options: { port: { type: 'string' } } });
 * } catch (err) {
 *   throw parseArgsError(err, ['port'], 'jwt-grpc serve'); // option --prot: is not a flag of jwt-grpc serve; did you mean --port?
 * }
 * ```
 */
export function parseArgsError(err: unknown, flags: readonly string[], command: string): JwtGrpcError {
  // Node's own errors may come from another realm (a vm context): read the message, not instanceof.
  const text = (err as { message?: unknown } | undefined)?.message;
  const message = typeof text === 'string' ? text : String(err);
  const unknown = /^Unknown option '(-{1,2}[^']+)'/.exec(message)?.[1];
  if (unknown !== undefined) {
    const known = flags.map((flag) => `--${flag}`);
    // A flag cut short (`--admin-token`) is too far from its whole name for the edit distance.
    const longer = known.filter((flag) => flag.startsWith(unknown));
    const nearest = nearestName(unknown, known) ?? (longer.length === 1 ? longer[0] : undefined);
    return invalidOption(unknown, `is not a flag of ${command}${nearest === undefined ? '' : `; did you mean ${nearest}?`}`);
  }
  const missing = /^Option '(?:-\w, )?(--[\w-]+) <value>' argument missing/.exec(message)?.[1];
  if (missing !== undefined) return invalidOption(missing, 'needs a value');
  const valued = /^Option '(?:-\w, )?(--[\w-]+)' does not take an argument/.exec(message)?.[1];
  if (valued !== undefined) return invalidOption(valued, 'takes no value: give the flag alone');
  const positional = /^Unexpected argument '([^']*)'/.exec(message)?.[1];
  if (positional !== undefined)
    return new JwtGrpcError('ERR_INVALID_OPTION', `unexpected argument ${JSON.stringify(positional)}: ${command} takes flags only`);
  return new JwtGrpcError('ERR_INVALID_OPTION', `${command}: ${message}`);
}

/**
 * An unknown command (`jwt-grpc serv`, `jwt-grpc keys genrate`), with the nearest of
 * `commands`; `kind` says whose (`command`, `keys command`).
 *
 * @example
 * ```ts
 * unknownCommand('serv', ['serve', 'keys'], 'command'); // unknown command "serv"; did you mean serve?
 * ```
 */
export function unknownCommand(name: string, commands: readonly string[], kind: string): JwtGrpcError {
  const nearest = nearestName(name, commands);
  const hint = nearest === undefined ? `the commands are ${commands.join(', ')}` : `did you mean ${nearest}?`;
  return new JwtGrpcError('ERR_INVALID_OPTION', `unknown ${kind} ${JSON.stringify(name)}; ${hint}`);
}
