/**
 * Who may call RevokeJwt: a caller whose client certificate id the policy lists under
 * `revokers`, or one that sends the admin secret as `authorization: Bearer SECRET`. A
 * server given neither refuses every RevokeJwt (fails closed). The secret is compared in
 * constant time (as SHA-256 digests, so lengths do not leak either) and never appears in
 * a log line or an error. @internal
 */
import type { Buffer } from 'node:buffer';
import { createHash, timingSafeEqual } from 'node:crypto';
import { JwtGrpcError } from '../base/errors.js';
import type { Logger } from '../base/log.js';
import { readSecretFile } from '../base/secret-file.js';
import type { CallContext } from '../contracts/handler-api.js';

/** Shortest admin secret accepted: anything shorter can be guessed. */
export const MIN_ADMIN_SECRET_LENGTH = 16;

/** The admin secret as the server keeps it: its SHA-256 digest only. */
export interface AdminSecret {
  readonly digest: Buffer;
}

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * Reads the admin secret from `file` (`label` names the option in errors): its text
 * without a trailing newline, at least 16 characters, no whitespace inside. Warns through
 * `logger` when group, others or another user could read or replace the file.
 */
export async function readAdminSecret(file: string, label: string, logger: Pick<Logger, 'warn'>): Promise<AdminSecret> {
  let text: string;
  try {
    text = (await readSecretFile(file, 'admin token file', logger)).toString('utf8');
  } catch (err) {
    throw new JwtGrpcError('ERR_FILE', `${label}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`, { field: label });
  }
  const secret = text.replace(/\r?\n$/, '');
  // The messages say what is wrong with the secret, never what it is.
  if (secret.length < MIN_ADMIN_SECRET_LENGTH) {
    throw new JwtGrpcError('ERR_INVALID_OPTION', `${label}: ${file} must hold a secret of at least ${MIN_ADMIN_SECRET_LENGTH} characters`, {
      field: label,
    });
  }
  if (/\s/.test(secret))
    throw new JwtGrpcError('ERR_INVALID_OPTION', `${label}: ${file}: the secret may not contain whitespace`, { field: label });
  return { digest: digest(secret) };
}

const BEARER = /^Bearer ([^\s]+)$/i;

/**
 * Says who revokes: the caller's id (a listed revoker) or `admin-token`. Throws
 * `ERR_PERMISSION_DENIED` when the server has no admin credential or the caller is not a
 * revoker, `ERR_UNAUTHENTICATED` when the secret is missing or wrong (the service answers
 * PERMISSION_DENIED and UNAUTHENTICATED).
 */
export function authorizeRevoke(
  call: Pick<CallContext, 'caller' | 'metadata'>,
  secret: AdminSecret | undefined,
  revokers: readonly string[] | undefined,
): string {
  const callerId = call.caller?.id;
  if (callerId !== undefined && revokers?.includes(callerId) === true) return callerId;
  if (secret === undefined) {
    if (revokers === undefined || revokers.length === 0) {
      throw new JwtGrpcError(
        'ERR_PERMISSION_DENIED',
        'RevokeJwt is off: the server has no admin credential (start it with --admin-token-file FILE, or list revokers in its --policy; in code, adminTokenFile; docs/revocation.md)',
      );
    }
    throw new JwtGrpcError(
      'ERR_PERMISSION_DENIED',
      `caller ${callerId === undefined ? '(no client certificate)' : JSON.stringify(callerId)} is not among the policy's revokers`,
    );
  }
  const header = call.metadata.get('authorization');
  const match = typeof header === 'string' ? BEARER.exec(header) : null;
  if (match === null)
    throw new JwtGrpcError(
      'ERR_UNAUTHENTICATED',
      'RevokeJwt needs the admin secret: jwt-grpc revoke --admin-token-file FILE (it sends "authorization: Bearer SECRET"), or a client certificate the policy lists under revokers',
    );
  if (!timingSafeEqual(digest(match[1] as string), secret.digest))
    throw new JwtGrpcError('ERR_UNAUTHENTICATED', 'the admin secret does not match');
  return 'admin-token';
}
