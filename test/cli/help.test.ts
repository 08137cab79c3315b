/** `jwt-grpc --help` (src/cli/help.ts): every command, every flag with its variable, the variables without a flag, defaults and exit codes. */
import { describe, expect, it } from 'vitest';
import { CLI_OPTIONS } from '../../src/cli/args.js';
import { EXIT_CODES } from '../../src/cli/exit-codes.js';
import { helpText } from '../../src/cli/help.js';
import { OPTIONS } from '../../src/options/table.js';

describe('helpText', () => {
  const help = helpText('9.9.9');

  it('starts with the version and lists the commands', () => {
    expect(help.split('\n')[0]).toBe('jwt-grpc 9.9.9: sign and verify JSON Web Tokens as a gRPC service (jwt.services.JwtService)');
    for (const command of ['serve', 'keys generate', 'token', 'verify', 'revoke', '--help', '--version'])
      expect(help).toContain(`  jwt-grpc ${command}`);
  });

  it('documents every command-line option with its environment twin', () => {
    for (const name of CLI_OPTIONS) {
      const cli = OPTIONS[name].cli as { flag?: string; env: string };
      if (cli.flag !== undefined) {
        expect(help, name).toMatch(new RegExp(`^ {2}--${cli.flag}[ \\n]`, 'm'));
        expect(help, name).toMatch(new RegExp(`env: ${cli.env}(=1)?$`, 'm'));
      } else {
        expect(help, name).toMatch(new RegExp(`^ {2}${cli.env}=`, 'm'));
      }
    }
  });

  it('shows defaults and ranges, and a negated switch without its default', () => {
    expect(help).toMatch(/^ {2}--port PORT +port to bind, 0 = any free port \(default 50051; 0-65535\)$/m);
    expect(help).toMatch(/^ {2}--no-jti +do not put a random jti .*all the same\)$/m);
    expect(help).toMatch(/^ {2}--watch-keys +reload the --keys/m);
    expect(help).toMatch(/^ {2}--keys FILE +the signing keys .*\(default ephemeral keys, with a warning\)$/m);
  });

  it('lists the exit codes of serve', () => {
    for (const { code, serve } of EXIT_CODES) expect(help).toContain(`  ${code}  ${serve}`);
  });
});
