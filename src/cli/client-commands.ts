import { ALGORITHMS, isAlgorithm } from '../algorithms/names.js';
import { invalidOption } from '../base/errors.js';
import { readAdminSecretText } from './admin-token.js';
import { CallMetadata, GrpcStatus, GrpcStatusError } from '../contracts/handler-api.js';
import { type JwtClient, createJwtClient } from '../client/jwt-client.js';
import { type ClientTlsOptions, clientTransport } from './tls-files.js';
import { isUrlTarget, targetAddresses, targetIsLocal } from './target.js';

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
  /** Send the admin secret without TLS to a target that is not loopback (`--allow-plaintext-admin-token`). Default: refused. */
  readonly allowPlaintextAdminToken?: boolean;
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

/** OpenSSL's words for a server certificate that no trusted CA signed. */
const UNTRUSTED_CERTIFICATE =
  /unable to verify the first certificate|self[- ]signed certificate|unable to get (local )?issuer certificate/i;

/** The port grpc-js dials when the target names none (the https port, for a DNS name). */
const DEFAULT_TARGET_PORT = 443;

/** Whether these options make the client use TLS (any TLS flag implies it). */
function usesTls(args: ClientTlsOptions): boolean {
  return args.tls === true || args.tlsCa !== undefined || args.tlsCert !== undefined || args.tlsServerName !== undefined;
}

/** What the TLS handshake's failure says to change, if it is one. */
function tlsHint(details: string, args: ClientTlsOptions): string | undefined {
  if (CERTIFICATE_REQUIRED.test(details) && args.tlsCert === undefined) {
    return 'the server asks for a client certificate (mutual TLS): give --tls-cert FILE and --tls-key FILE';
  }
  if (CERTIFICATE_REQUIRED.test(details)) {
    return `the server refused the client certificate ${args.tlsCert}: it must be signed by a CA the server trusts (its --tls-client-ca)`;
  }
  if (UNTRUSTED_CERTIFICATE.test(details)) {
    return args.tlsCa === undefined
      ? "the server's certificate is not signed by a CA this system trusts: give the CA that signed it, --tls-ca FILE"
      : `the server's certificate is not signed by --tls-ca ${args.tlsCa}: give the CA that signed it`;
  }
  if (!usesTls(args) && /Failed to connect/.test(details)) {
    return 'the connection closed before any answer, as a TLS server closes a plaintext client: if the server serves TLS, add --tls (and --tls-ca FILE for a private CA)';
  }
  if (usesTls(args) && /wrong version number|packet length too long/i.test(details)) {
    return 'the server answered in plaintext: drop --tls and the other --tls-* options';
  }
  return undefined;
}

/** What a failure to reach the target's port says to change: its port, or the server. */
function portHint(details: string, target: string): string | undefined {
  const address = targetAddresses(target)[0];
  if (address !== undefined && address.port === undefined) {
    return `--target names no port, so it dialled ${address.host}:${DEFAULT_TARGET_PORT}: add :PORT, the server's --port (e.g. ${address.host}:50051)`;
  }
  if (/ECONNREFUSED/.test(details)) return `nothing listening on ${target}: is the server running, and is this its --port?`;
  if (/Protocol error/.test(details)) {
    return "not a gRPC port: is it the metrics or discovery port? --target takes the server's --port";
  }
  return undefined;
}

/**
 * A failed connection said in the flags that fix it, instead of grpc-js's channel error (an
 * OpenSSL string, `No connection established`, a bare "Failed to connect"); any other error as it came.
 */
function explainConnectionError(err: unknown, args: ClientTlsOptions & { target: string }): unknown {
  if (!(err instanceof GrpcStatusError) || err.status !== GrpcStatus.UNAVAILABLE) return err;
  const hint = tlsHint(err.details, args) ?? portHint(err.details, args.target);
  return hint === undefined ? err : new GrpcStatusError(err.status, `cannot reach ${args.target}: ${hint}`, { cause: err });
}

/** The request fields of JwtService (proto/jwt.proto) a server's INVALID_ARGUMENT names, and the flag that sets each. */
const WIRE_FLAGS: Readonly<Record<string, string>> = {
  algorithm: '--alg',
  subject: '--sub',
  audience: '--aud',
  ttl_seconds: '--ttl',
  issuer: '--iss',
  jwt: 'TOKEN',
  jti: '--jti',
  expires_at: '--exp',
  reason: '--reason',
};

/**
 * A server's INVALID_ARGUMENT about a request field (`ttl_seconds: must be from 1 to 600 (0
 * means 600)`) said with the flag that set it (`--ttl: ... (without --ttl: 600)`); any
 * other error as it came.
 */
function inFlagTerms(err: unknown): unknown {
  if (!(err instanceof GrpcStatusError) || err.status !== GrpcStatus.INVALID_ARGUMENT) return err;
  const field = /^([a-z_]+): /.exec(err.details)?.[1];
  const flag = field === undefined ? undefined : WIRE_FLAGS[field];
  if (field === undefined || flag === undefined) return err;
  // The wire's 0 is the CLI's flag left out.
  const said = err.details.slice(field.length + 2).replace(/\(0 means (\d+)\)/, `(without ${flag}: $1)`);
  return new GrpcStatusError(err.status, `the issuer refused ${flag}: ${said}`, { cause: err });
}

async function withClient<T>(args: ClientTlsOptions & { target: string }, run: (client: JwtClient) => Promise<T>): Promise<T> {
  const target = requireText('--target', args.target);
  if (isUrlTarget(target)) {
    throw invalidOption(
      '--target',
      `give HOST:PORT, not a URL: ${target.replace(/^[a-z0-9]+:\/\/([^/]*).*$/i, '$1')}, or dns:///HOST:PORT`,
    );
  }
  const client = createJwtClient(target, await clientTransport(args));
  try {
    return await run(client);
  } catch (err) {
    throw inFlagTerms(explainConnectionError(err, args));
  } finally {
    client.close();
  }
}

/**
 * The admin secret is a bearer credential: sent without TLS to another machine, anyone on
 * the path may read it and revoke any token. Refused unless the target is this machine or
 * `--allow-plaintext-admin-token` says the path is trusted (the server warns of the same on
 * its side: src/server/plaintext-admin.ts).
 */
function refusePlaintextAdminSecret(args: RevokeCommandArgs): void {
  if (args.adminTokenFile === undefined || usesTls(args) || args.allowPlaintextAdminToken === true) return;
  if (targetIsLocal(args.target)) return;
  throw invalidOption(
    '--admin-token-file',
    `would send the admin secret to ${args.target} in plaintext, readable by anyone on the path: add --tls (and --tls-ca FILE for a private CA), or --allow-plaintext-admin-token if the network is trusted`,
  );
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
  refusePlaintextAdminSecret(args);
  const metadata = new CallMetadata();
  if (args.adminTokenFile !== undefined) metadata.set('authorization', `Bearer ${await readAdminSecretText(args.adminTokenFile)}`);
  const request = byToken
    ? { jwt: args.token, reason: args.reason ?? '' }
    : { jti: args.jti, expires_at: args.exp, reason: args.reason ?? '' };
  const answer = await withClient(args, (client) => client.revokeJwt(request, { metadata }));
  output.stdout.write(`${JSON.stringify({ revoked: answer.revoked, expires_at: answer.expires_at })}\n`);
  return 0;
}
