/**
 * The faults of a key backend that is not set up (AWS KMS without a region, credentials or
 * a reachable endpoint; a PKCS#11 library that throws), said as one line at the CLI's
 * boundary: the backend's own error is the SDK's or the library's, with a stack trace and no
 * word of which setting to fix. The backends keep their errors; only the command line turns
 * them into what to do.
 */
import { JwtGrpcError } from '../base/errors.js';
import type { HandleTarget } from './keys-args.js';
import { describePkcs11Uri } from '../keys/backends/pkcs11-uri.js';

/** The network errors of an endpoint that cannot be reached (Node's `code`). */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * What to set for an AWS SDK set-up fault, from the error's name, code and message; undefined
 * for any other error. The region and credential faults come before a request is made, from
 * the SDK's configuration (their message and name are all they carry); the others are the
 * SDK's request errors, which carry `$metadata`.
 */
function kmsSetupHint(err: Error & { code?: unknown }, env: NodeJS.ProcessEnv): string | undefined {
  if (/Region is missing|Region not accepted/i.test(err.message)) {
    return 'no AWS region: set AWS_REGION (e.g. eu-west-1), or a region in the config of AWS_PROFILE';
  }
  if (err.name === 'CredentialsProviderError') {
    return 'no AWS credentials: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run with an instance or task role';
  }
  // Only the SDK's own: a revocation store's ECONNREFUSED is no KMS endpoint's.
  if (!('$metadata' in err)) return undefined;
  if (typeof err.code === 'string' && UNREACHABLE.has(err.code)) {
    const endpoint = env['AWS_ENDPOINT_URL_KMS'] ?? env['AWS_ENDPOINT_URL'];
    return endpoint === undefined
      ? `cannot reach KMS (${err.code}): check AWS_REGION and the network`
      : `cannot reach the KMS endpoint ${endpoint} (${err.code}): check AWS_ENDPOINT_URL and that it is up`;
  }
  if (err.name === 'UnrecognizedClientException' || err.name === 'InvalidSignatureException') {
    return 'AWS refused the credentials: check AWS_PROFILE or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY';
  }
  if (err.name === 'AccessDeniedException')
    return 'the credentials may not do this: they need kms:CreateKey, kms:CreateAlias and kms:GetPublicKey';
  return undefined;
}

/** The first line of an error's message, with its name unless the message already says it. */
function firstLine(err: Error): string {
  const line = err.message.split('\n')[0] ?? '';
  return err.name === 'Error' || line.startsWith(err.name) ? line : `${err.name}: ${line}`;
}

/**
 * A command's failure in a key backend as one line: a backend's error that already is one
 * (a `JwtGrpcError`, as `serve` and `keys public` get from loading a key file) gains what to
 * set when its cause is an AWS set-up fault; a raw SDK or PKCS#11 error from making a key in
 * `handle` (`keys generate`, `keys rotate`) becomes `kms key alias/NAME: ...`. Anything else
 * is passed on as it came (an unexpected error keeps its stack).
 *
 * @example
 * ```ts
 * await runKeysCommand(args, print).catch((err: unknown) => {
 *   throw keyBackendError(err, args.handle, process.env);
 * });
 * ```
 */
export function keyBackendError(err: unknown, handle: HandleTarget | undefined, env: NodeJS.ProcessEnv): unknown {
  if (err instanceof JwtGrpcError) {
    const hint = err.cause instanceof Error ? kmsSetupHint(err.cause, env) : undefined;
    return hint === undefined ? err : new JwtGrpcError(err.code, `${err.message}: ${hint}`, { field: err.field, cause: err.cause });
  }
  if (!(err instanceof Error)) return err;
  const hint = kmsSetupHint(err, env);
  if (hint === undefined && !fromBackend(err)) return err;
  const what = hint ?? (err.name === 'Pkcs11Error' ? `the PKCS#11 library refused: ${firstLine(err)}` : firstLine(err));
  if (handle === undefined)
    return new JwtGrpcError('ERR_INVALID_KEY', `${err.name === 'Pkcs11Error' ? 'pkcs11' : 'kms'}: ${what}`, { cause: err });
  const where = `${handle.member} key ${handle.member === 'pkcs11' ? describePkcs11Uri(handle.ref) : handle.ref}`;
  return new JwtGrpcError('ERR_INVALID_KEY', `${where}: cannot make the key: ${what}`, { field: handle.member, cause: err });
}

/** An error of the AWS SDK (its service errors carry `$metadata`) or of pkcs11js: a backend's, not a bug of the command. */
function fromBackend(err: Error): boolean {
  return '$metadata' in err || err.name === 'Pkcs11Error';
}
