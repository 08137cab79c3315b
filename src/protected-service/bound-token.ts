/**
 * The consumer's half of certificate-bound tokens (RFC 8705 section 3,
 * https://www.rfc-editor.org/rfc/rfc8705#section-3): a token whose `cnf` carries
 * `x5t#S256` is accepted only on a connection whose verified client certificate has that
 * SHA-256 thumbprint. A stolen bound token is worth nothing without the certificate's key.
 */
import type { Buffer } from 'node:buffer';
import type { JwtPayload } from '../tokens/result.js';
import { certificateThumbprint } from '../transport/caller.js';

/** The `x5t#S256` of a peer certificate's DER, or undefined without one. */
export function peerThumbprint(der: Buffer | undefined): string | undefined {
  return der === undefined || der.length === 0 ? undefined : certificateThumbprint(der);
}

/**
 * Why a token may not be used on this connection, or undefined when it may: an unbound
 * token always may; a bound one only with the certificate it names. A `cnf` this service
 * cannot check (another confirmation method) is refused: fail closed.
 */
export function bindingProblem(claims: JwtPayload, thumbprint: string | undefined): string | undefined {
  const cnf = (claims as Record<string, unknown>)['cnf'];
  if (cnf === undefined) return undefined;
  const bound = typeof cnf === 'object' && cnf !== null ? (cnf as Record<string, unknown>)['x5t#S256'] : undefined;
  if (typeof bound !== 'string') return 'the token is bound by a cnf this service cannot check (only x5t#S256)';
  if (thumbprint === undefined) return 'the token is bound to a client certificate and the connection presented none';
  if (bound !== thumbprint) return 'the token is bound to another client certificate';
  return undefined;
}
