/**
 * An admin secret (RevokeJwt's bearer token) accepted on a port without TLS crosses the
 * network readable by anyone on the path: one warning at start, from whichever process
 * owns the port's start (createJwtServer alone, or the primary of a cluster, whose workers
 * would otherwise repeat it). Not on loopback: a secret sent there never leaves the
 * machine, and whoever can read loopback traffic can read the token file too, so a warning
 * there would only teach people to ignore it.
 */
import { isIPv4 } from 'node:net';
import type { Logger } from '../base/log.js';

/**
 * Whether `host` binds loopback only (127.0.0.0/8, ::1, localhost).
 *
 * @example
 * ```ts
 * isLoopbackHost('127.0.0.1'); // true
 * isLoopbackHost('0.0.0.0'); // false: every interface
 * ```
 * @internal
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost' || bare === '::1' || bare === '0:0:0:0:0:0:0:1') return true;
  if (isIPv4(bare)) return bare.startsWith('127.');
  // An IPv4-mapped IPv6 loopback address.
  return /^::ffff:127\./.test(bare);
}

/**
 * Warns once that the admin secret is accepted in plaintext on `host:port`, unless `host` is
 * loopback. The line names both the library option and the CLI flag, since either set it.
 * @internal
 */
export function warnAdminSecretOnPlaintext(logger: Logger, host: string, port: number): void {
  if (isLoopbackHost(host)) return;
  const shown = host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
  logger.warn(
    `--admin-token-file (adminTokenFile) on a plaintext port (${shown}, no TLS): the admin secret crosses the network readable by anyone on the path; ` +
      'serve TLS with --tls-cert/--tls-key (the tls of listen), or bind --host to loopback (docs/revocation.md)',
  );
}
