/**
 * The `jwt-grpc` command: parses the command line and runs the command (src/bin/jwt-grpc.ts
 * starts it). Each command's module is loaded when it runs, so `serve` does not carry the
 * client's dependencies (src/base/optional-deps.ts says what they cost).
 */
import { internalError } from '../base/assert.js';
import { JwtGrpcError } from '../base/errors.js';
import { parseCommand } from './args.js';
import { helpText } from './help.js';
import { clientHelpText } from './client-args.js';
import { type HandleTarget, keysHelpText } from './keys-args.js';
import { PACKAGE_VERSION } from '../base/package-root.js';
import { EXIT } from './exit-codes.js';
import { cliLabel } from '../options/resolve.js';
import { OPTIONS, type OptionName } from '../options/table.js';

/**
 * A key backend's set-up fault said as one line, in every command that reaches a backend
 * (./backend-errors.ts); loaded only when a command fails.
 */
async function asOneLine(err: unknown, handle?: HandleTarget): Promise<never> {
  throw (await import('./backend-errors.js')).keyBackendError(err, handle, process.env);
}

/** Resolves to the exit code (./exit-codes.ts). */
async function main(): Promise<number> {
  const command = parseCommand(process.argv.slice(2), process.env);
  switch (command.kind) {
    case 'help':
      process.stdout.write(helpText(PACKAGE_VERSION));
      return EXIT.ok;
    case 'version':
      process.stdout.write(`${PACKAGE_VERSION}\n`);
      return 0;
    case 'keys':
      if (command.args.action === 'help') process.stdout.write(keysHelpText());
      else {
        const { args } = command;
        const { runKeysCommand } = await import('./keys.js');
        await runKeysCommand(args, (line) => process.stdout.write(`${line}\n`)).catch((err: unknown) =>
          asOneLine(err, 'handle' in args ? args.handle : undefined),
        );
      }
      return 0;
    case 'client': {
      const { args } = command;
      if (args.action === 'help') {
        process.stdout.write(clientHelpText(args.command));
        return 0;
      }
      (await import('./quiet-warnings.js')).quietIpServerNameWarning();
      const { runRevokeCommand, runTokenCommand, runVerifyCommand } = await import('./client-commands.js');
      switch (args.action) {
        case 'token':
          return runTokenCommand(args.args);
        case 'verify':
          return runVerifyCommand(args.args);
        case 'revoke':
          return runRevokeCommand(args.args);
      }
      // Not to fall through into serve should the parser one day return an action this switch lacks.
      throw internalError('client: an action without a command');
    }
    case 'serve': {
      const { serve } = await import('./serve.js');
      const handle = await serve(command.args).catch((err: unknown) => asOneLine(err));
      return handle.done;
    }
  }
}

/**
 * A library error about an option, said with the flag that sets it (`option tracing: ...`
 * from createJwtServer reads `option --otel: ...` on the command line).
 */
function asCommandLine(err: JwtGrpcError): string {
  const field = err.field;
  if (err.code !== 'ERR_INVALID_OPTION' || field === undefined || !Object.hasOwn(OPTIONS, field)) return err.message;
  const prefix = `option ${field}:`;
  return err.message.startsWith(prefix) ? `option ${cliLabel(field as OptionName)}:${err.message.slice(prefix.length)}` : err.message;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof JwtGrpcError) {
      process.stderr.write(`jwt-grpc: ${asCommandLine(err)}\n`);
      if (err.code === 'ERR_INVALID_OPTION') {
        const sub = process.argv[2];
        const help =
          sub === 'keys' || sub === 'token' || sub === 'verify' || sub === 'revoke' ? `jwt-grpc ${sub} --help` : 'jwt-grpc --help';
        process.stderr.write(`Run '${help}' for the options.\n`);
        process.exit(EXIT.badOption);
      }
    } else {
      process.stderr.write(`jwt-grpc: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    }
    process.exit(EXIT.failed);
  },
);
