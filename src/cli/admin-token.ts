import { JwtGrpcError } from '../base/errors.js';
import { type Logger, createStderrLogger } from '../base/log.js';
import { readSecretFile } from '../base/secret-file.js';

/**
 * The admin secret of `--admin-token-file` on the client side: the file's text without a
 * trailing newline, as the server reads its own copy. Errors name the file, never the secret;
 * a file open to group, others or another user is warned about on `logger` (stderr).
 */
export async function readAdminSecretText(file: string, logger: Pick<Logger, 'warn'> = createStderrLogger()): Promise<string> {
  let text: string;
  try {
    text = (await readSecretFile(file, 'admin token file', logger)).toString('utf8');
  } catch (err) {
    throw new JwtGrpcError('ERR_FILE', `--admin-token-file: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`, {
      field: 'admin-token-file',
    });
  }
  const secret = text.replace(/\r?\n$/, '');
  if (secret.length === 0 || /\s/.test(secret)) {
    throw new JwtGrpcError('ERR_INVALID_OPTION', `--admin-token-file: ${file} must hold the secret on one line, without whitespace`, {
      field: 'admin-token-file',
    });
  }
  return secret;
}
