#!/usr/bin/env node
import { JwtGrpcError } from '../errors.js';
import { parseCommand } from '../cli/args.js';
import { helpText } from '../cli/help.js';
import { serve } from '../cli/serve.js';
import { PACKAGE_VERSION } from '../package-root.js';

/** Exit codes: 0 clean stop, 1 cannot start / crash loop, 2 bad option (see --help). */
async function main(): Promise<number> {
  const command = parseCommand(process.argv.slice(2), process.env);
  switch (command.kind) {
    case 'help':
      process.stdout.write(helpText(PACKAGE_VERSION));
      return 0;
    case 'version':
      process.stdout.write(`${PACKAGE_VERSION}\n`);
      return 0;
    case 'serve': {
      const handle = await serve(command.args, process.env);
      return handle.done;
    }
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof JwtGrpcError) {
      process.stderr.write(`jwt-grpc: ${err.message}\n`);
      if (err.code === 'ERR_INVALID_OPTION') {
        process.stderr.write("Run 'jwt-grpc --help' for the options.\n");
        process.exit(2);
      }
    } else {
      process.stderr.write(`jwt-grpc: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    }
    process.exit(1);
  },
);
