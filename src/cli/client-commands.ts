import { ALGORITHMS, isAlgorithm } from '../algorithms/names.js';
import { invalidOption } from '../errors.js';
import { readAdminSecretText } from './admin-token.js';
import { CallMetadata, GrpcStatus, GrpcStatusError } from '../transport/handler-api.js';
import { type JwtClient, createJwtClient } from '../client/jwt-client.js';
import { type ClientTlsOptions, clientTransport } from './tls-files.js';

/** Where a command writes its result; tests pass their own. */
export interface CommandOutput {
  readonly stdout: { write(text: string): unknown };
}

/** `jwt-grpc token`: ask an issuer for a token. */
export interface TokenCommandArgs extends ClientTlsOptions {
  /** The issuer, any grpc-js target (`host:port`, `dns:///name:port`). */
  readonly target: string;
  readonly alg: string;
  readonly sub: string;
  readonly aud?: string;
  /** Lifetime in seconds. Default: the issuer's. */
  readonly ttlSeconds?: number;
}

/** `jwt-grpc verify`: ask an issuer whether a token is valid. */
export interface VerifyCommandArgs extends ClientTlsOptions {
  readonly target: string;
  readonly token: string;
  /** Required `aud`. */
  readonly aud?: string;
  /** Required `iss`. */
  readonly iss?: string;
}

/** `jwt-grpc revoke`: ask an issuer to revoke a token, by the token or by its jti and exp. */
export interface RevokeCommandArgs extends ClientTlsOptions {
  readonly target: string;
  /** The token; or give `jti` and `exp`. */
  readonly token?: string;
  readonly jti?: string;
  /** The token's exp, seconds since the epoch (with `jti`). */
  readonly exp?: number;
  /** Free text for the issuer's audit log. */
  readonly reason?: string;
  /** A file holding the issuer's admin secret, sent as `authorization: Bearer SECRET`. Without it: a client certificate the issuer's policy lists under revokers. */
  readonly adminTokenFile?: string;
}

/** The verdict `runVerifyCommand` prints, one JSON line. */
export type VerifyVerdict =
  | { readonly valid: true; readonly sub: string; readonly claims: unknown }
  | { readonly valid: false; readonly reason: string };

function requireText(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw invalidOption(name, 'is required');
  return value;
}

/** TLS alerts a server sends a client that brought no certificate (TLS 1.3 and 1.2). */
const CERTIFICATE_REQUIRED = /alert certificate required|alert handshake failure|peer did not return a certificate/i;

/**
 * A failed connection said in the flags that fix it, instead of grpc-js's channel error (an
 * OpenSSL string, or a bare "Failed to connect"); any other error as it came.
 */
function explainConnectionError(err: unknown, args: ClientTlsOptions & { target: string }): unknown {
  if (!(err instanceof GrpcStatusError) || err.status !== GrpcStatus.UNAVAILABLE) return err;
  const usesTls = args.tls === true || args.tlsCa !== undefined || args.tlsCert !== undefined || args.tlsServerName !== undefined;
  let hint: string | undefined;
  if (CERTIFICATE_REQUIRED.test(err.details) && args.tlsCert === undefined) {
    hint = 'the server asks for a client certificate (mutual TLS): give --tls-cert FILE and --tls-key FILE';
  } else if (CERTIFICATE_REQUIRED.test(err.details)) {
    hint = `the server refused the client certificate ${args.tlsCert}: it must be signed by a CA the server trusts (its --tls-client-ca)`;
  } else if (!usesTls && /Failed to connect/.test(err.details)) {
    hint =
      'the connection closed before any answer, as a TLS server closes a plaintext client: if the server serves TLS, add --tls (and --tls-ca FILE for a private CA)';
  } else if (usesTls && /wrong version number|packet length too long/i.test(err.details)) {
    hint = 'the server answered in plaintext: drop --tls and the other --tls-* options';
  }
  return hint === undefined ? err : new GrpcStatusError(err.status, `cannot reach ${args.target}: ${hint}`, { cause: err });
}

async function withClient<T>(args: ClientTlsOptions & { target: string }, run: (client: JwtClient) => Promise<T>): Promise<T> {
  const client = createJwtClient(requireText('--target', args.target), await clientTransport(args));
  try {
    return await run(client);
  } catch (err) {
    throw explainConnectionError(err, args);
  } finally {
    client.close();
  }
}

/**
 * Prints a token from the issuer at `target` (GenerateJwt), one line. Resolves to the exit
 * code, 0; a failed call rejects with `GrpcStatusError`, a bad option with `ERR_INVALID_OPTION`.
 *
 * @example
 * ```ts
 * const code = await runTokenCommand({ target: 'jwt.internal:50051', alg: 'ES256', sub: 'svc-orders', tlsCa: 'ca.pem' });
 * ```
 */
export async function runTokenCommand(args: TokenCommandArgs, output: CommandOutput = process): Promise<number> {
  if (!isAlgorithm(args.alg)) throw invalidOption('--alg', `must be one of ${ALGORITHMS.join(', ')}, got ${JSON.stringify(args.alg)}`);
  const subject = requireText('--sub', args.sub);
  const made = await withClient(args, (client) =>
    client.generateJwt({ algorithm: args.alg, subject, audience: args.aud ?? '', ttl_seconds: args.ttlSeconds ?? 0 }),
  );
  output.stdout.write(`${made.jwt}\n`);
  return 0;
}

/**
 * Asks the issuer at `target` to verify `token` (VerifyJwt) and prints the verdict as one
 * JSON line: `{"valid":true,"sub":...,"claims":{...}}` or `{"valid":false,"reason":"EXPIRED"}`.
 * Resolves to the exit code: 0 valid, 1 not.
 *
 * @example
 * ```ts
 * process.exitCode = await runVerifyCommand({ target: 'jwt.internal:50051', token, tlsCa: 'ca.pem' });
 * ```
 */
export async function runVerifyCommand(args: VerifyCommandArgs, output: CommandOutput = process): Promise<number> {
  const jwt = requireText('--token', args.token);
  const response = await withClient(args, (client) => client.verifyJwt({ jwt, audience: args.aud ?? '', issuer: args.iss ?? '' }));
  const verdict: VerifyVerdict = response.valid
    ? { valid: true, sub: response.sub, claims: JSON.parse(response.claims_json) as unknown }
    : { valid: false, reason: response.reason };
  output.stdout.write(`${JSON.stringify(verdict)}\n`);
  return verdict.valid ? 0 : 1;
}

/**
 * Asks the issuer at `target` to revoke a token (RevokeJwt) and prints its answer as one
 * JSON line, `{"revoked":true,"expires_at":...}`. Resolves to the exit code, 0; a refused
 * call rejects with `GrpcStatusError` (PERMISSION_DENIED, UNAUTHENTICATED, INVALID_ARGUMENT).
 *
 * @example
 * ```ts
 * // hidden: declare const token: string;
 * await runRevokeCommand({ target: 'jwt.internal:50051', token, adminTokenFile: '/run/secrets/jwt-admin', tlsCa: 'ca.pem' });
 * ```
 */
export async function runRevokeCommand(args: RevokeCommandArgs, output: CommandOutput = process): Promise<number> {
  const byToken = args.token !== undefined && args.token !== '';
  if (byToken === (args.jti !== undefined)) throw invalidOption('TOKEN/--jti', 'give a token, or --jti with --exp');
  if (!byToken && args.exp === undefined) throw invalidOption('--exp', "is required with --jti: the token's exp, seconds since the epoch");
  const metadata = new CallMetadata();
  if (args.adminTokenFile !== undefined) metadata.set('authorization', `Bearer ${await readAdminSecretText(args.adminTokenFile)}`);
  const request = byToken
    ? { jwt: args.token, reason: args.reason ?? '' }
    : { jti: args.jti, expires_at: args.exp, reason: args.reason ?? '' };
  const answer = await withClient(args, (client) => client.revokeJwt(request, { metadata }));
  output.stdout.write(`${JSON.stringify({ revoked: answer.revoked, expires_at: answer.expires_at })}\n`);
  return 0;
}
