/**
 * The caller a verified client certificate names (mutual TLS): its id and the
 * certificate's thumbprint, read once per connection, never per call.
 *
 * The id is the certificate's first URI SAN as written (a SPIFFE ID,
 * `spiffe://trust-domain/path`, is a URI SAN: https://github.com/spiffe/spiffe/blob/main/standards/X509-SVID.md),
 * else `dns:` + its first DNS SAN; a certificate with neither has no id. The subject's CN
 * is never used: it is not a name a CA constrains.
 */
import type { Buffer } from 'node:buffer';
import { X509Certificate, createHash } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import type { CallerIdentity } from '../contracts/handler-api.js';

/** One SAN entry of Node's `subjectaltname` string: `TYPE:value`, or `TYPE:"json"` for a value Node escaped. */
const SAN_ENTRY = /([A-Za-z ]+):(?:"((?:[^"\\]|\\.)*)"|([^,]*))(?:, |$)/y;

/** The SAN entries of Node's `subjectaltname` string as [type, value] pairs, in certificate order. */
export function subjectAltNames(text: string | undefined): [string, string][] {
  const out: [string, string][] = [];
  if (text === undefined) return out;
  SAN_ENTRY.lastIndex = 0;
  while (SAN_ENTRY.lastIndex < text.length) {
    const match = SAN_ENTRY.exec(text);
    if (match === null) break;
    const [, type = '', quoted, plain = ''] = match;
    out.push([type, quoted === undefined ? plain : (JSON.parse(`"${quoted}"`) as string)]);
  }
  return out;
}

/** The caller id a certificate's SANs give (first URI, else `dns:` + first DNS name), or undefined. */
export function callerIdOf(subjectAltName: string | undefined): string | undefined {
  const names = subjectAltNames(subjectAltName);
  const uri = names.find(([type]) => type === 'URI');
  if (uri !== undefined) return uri[1];
  const dns = names.find(([type]) => type === 'DNS');
  return dns === undefined ? undefined : `dns:${dns[1]}`;
}

/** Base64url SHA-256 of a certificate's DER, as RFC 8705's `x5t#S256` writes it. */
export function certificateThumbprint(der: Buffer): string {
  return createHash('sha256').update(der).digest('base64url');
}

class CertificateCaller implements CallerIdentity {
  readonly id: string | undefined;
  readonly certificate: Buffer;
  #thumbprint: string | undefined = undefined;

  constructor(der: Buffer) {
    this.certificate = der;
    this.id = callerIdOf(new X509Certificate(der).subjectAltName);
  }

  get thumbprint(): string {
    return (this.#thumbprint ??= certificateThumbprint(this.certificate));
  }
}

/** The caller of a peer certificate Node (or grpc-js's auth context) gives, once verified; undefined without one. */
export function callerOfCertificate(certificate: { readonly raw?: Buffer } | undefined): CallerIdentity | undefined {
  const der = certificate?.raw;
  return der === undefined || der.length === 0 ? undefined : new CertificateCaller(der);
}

/** The caller of a connection: its client certificate when the TLS layer verified one, else undefined. */
export function callerOfSocket(socket: object): CallerIdentity | undefined {
  const tls = socket as Partial<TLSSocket>;
  if (tls.authorized !== true || typeof tls.getPeerCertificate !== 'function') return undefined;
  return callerOfCertificate(tls.getPeerCertificate());
}
