/**
 * A client command's `--target` read the way grpc-js reads it (its naming doc,
 * github.com/grpc/grpc/blob/master/doc/naming.md): `host:port`, `[v6]:port`,
 * `dns:[//authority/]host[:port]`, `ipv4:a:p,b:q`, `ipv6:[a]:p,...`, `unix:path`. Only what
 * the commands need to say about it: the addresses it names, and whether it stays on this
 * machine. @internal
 */
import { isLoopbackHost } from '../server/plaintext-admin.js';

/** One address of a target; `port` is undefined where the target gives none (grpc-js then dials 443). */
export interface TargetAddress {
  readonly host: string;
  readonly port: number | undefined;
}

/** A scheme and `://`: a URL, which grpc-js takes for a DNS name and fails to resolve. */
const URL_FORM = /^(https?|grpcs?|h2c?):\/\//i;

/** Whether `target` is written as a URL (`http://host:port`) rather than `host:port`. */
export function isUrlTarget(target: string): boolean {
  return URL_FORM.test(target);
}

function hostAndPort(text: string): TargetAddress {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed !== null) return { host: bracketed[1] as string, port: portOf(bracketed[2]) };
  const colons = text.split(':').length - 1;
  // More than one colon and no brackets: a bare IPv6 address, without a port.
  if (colons !== 1) return { host: text, port: undefined };
  const [host, port] = text.split(':') as [string, string];
  return { host, port: portOf(port) };
}

function portOf(text: string | undefined): number | undefined {
  return text === undefined || !/^\d+$/.test(text) ? undefined : Number(text);
}

/**
 * The addresses `target` names; none for a unix socket (it stays on this machine) or a
 * scheme this reader does not know.
 *
 * @example
 * ```ts
 * targetAddresses('dns:///jwt.internal:50051'); // [{ host: 'jwt.internal', port: 50051 }]
 * targetAddresses('localhost'); // [{ host: 'localhost', port: undefined }]
 * ```
 */
export function targetAddresses(target: string): TargetAddress[] {
  if (/^unix(-abstract)?:/.test(target)) return [];
  if (/^[a-z][\w+.-]*:\/\//i.test(target) && !target.startsWith('dns:')) return [];
  if (/^ipv[46]:/.test(target)) return target.slice(5).split(',').map(hostAndPort);
  const dns = /^dns:(?:\/\/[^/]*\/)?(.*)$/.exec(target);
  return [hostAndPort(dns === null ? target : (dns[1] as string))];
}

/**
 * Whether every address of `target` is this machine (loopback or a unix socket): a secret
 * sent there in plaintext never crosses a network.
 *
 * @example
 * ```ts
 * targetIsLocal('127.0.0.1:50051'); // true
 * targetIsLocal('jwt.internal:50051'); // false
 * ```
 */
export function targetIsLocal(target: string): boolean {
  if (/^unix(-abstract)?:/.test(target)) return true;
  if (isUrlTarget(target)) return false;
  const addresses = targetAddresses(target);
  return addresses.length > 0 && addresses.every((address) => isLoopbackHost(address.host));
}
