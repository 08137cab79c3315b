/**
 * grpc-js passes the target's host to TLS as the SNI server name even when it is an IP
 * address, which Node reports as DEP0123 (RFC 6066 allows only host names in SNI) on
 * every `jwt-grpc token --target 10.0.0.5:50051 --tls`. The certificate is still checked
 * against the IP address; only the SNI extension is affected, and Node drops it for IP
 * addresses by itself. So the CLI drops exactly that one warning; every other one prints.
 */

const SNI_IP_ADDRESS = 'DEP0123';

/** Filters DEP0123 out of this process's warnings (the command-line clients only). @internal */
export function quietIpServerNameWarning(): void {
  const emit = process.emitWarning.bind(process);
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]): void => {
    const [typeOrOptions, code] = rest;
    const given = typeof typeOrOptions === 'object' && typeOrOptions !== null ? (typeOrOptions as { code?: unknown }).code : code;
    if (given === SNI_IP_ADDRESS) return;
    (emit as (warning: string | Error, ...rest: unknown[]) => void)(warning, ...rest);
  }) as typeof process.emitWarning;
}
