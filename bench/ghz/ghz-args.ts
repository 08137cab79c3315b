import { PROTO_PATH } from '../../src/base/package-root.js';
import { repoPath } from '../kit/paths.js';

/**
 * The methods the benchmarks call, with the proto ghz reads and its fully qualified name:
 * JwtService's two, and the protected peer's Hello (bench/peers/protected), a service
 * that checks a jwt-grpc token on each call.
 */
export const RPC_METHODS = {
  GenerateJwt: { proto: PROTO_PATH, call: 'jwt.services.JwtService.GenerateJwt' },
  VerifyJwt: { proto: PROTO_PATH, call: 'jwt.services.JwtService.VerifyJwt' },
  Hello: { proto: repoPath('bench', 'peers', 'protected', 'greeter.proto'), call: 'demo.Greeter.Hello' },
} as const satisfies Record<string, { proto: string; call: string }>;

export type RpcMethod = keyof typeof RPC_METHODS;

/** What ghz calls: the scenarios' methods, and RevokeJwt (its throughput, macro/revoke-throughput.ts, is no scenario). */
export const GHZ_METHODS = {
  ...RPC_METHODS,
  RevokeJwt: { proto: PROTO_PATH, call: 'jwt.services.JwtService.RevokeJwt' },
} as const satisfies Record<string, { proto: string; call: string }>;

export type GhzMethod = keyof typeof GHZ_METHODS;

/** One ghz invocation. */
export interface GhzCall {
  readonly method: GhzMethod;
  /**
   * The request message, sent unchanged on every call unless `templated`: then ghz fills
   * its templates per call (`{{.RequestNumber}}`: RevokeJwt's jti, one per call).
   */
  readonly data: Readonly<Record<string, string>>;
  readonly templated?: boolean;
  /** Request metadata sent on every call (the protected cells' `authorization`). */
  readonly metadata?: Readonly<Record<string, string>>;
  readonly connections: number;
  readonly concurrency: number;
  readonly durationS: number;
  /**
   * Send this many calls (`-n`) instead of running for `durationS` (then only the
   * limit of how long the run may take): the warm-up sweep's fixed call counts.
   */
  readonly totalCalls?: number;
  /** GOMAXPROCS of ghz: the number of CPUs it is pinned to. */
  readonly cpus: number;
  readonly port: number;
  /** JSON report path. */
  readonly output: string;
  readonly name: string;
  /** Mutual TLS instead of plaintext (the mTLS rows): the CA that signed the server's certificate, ghz's own certificate and key. */
  readonly tls?: GhzTls;
}

/** The files of a mutual-TLS ghz run, and the name the server's certificate is checked against. */
export interface GhzTls {
  readonly caCert: string;
  readonly cert: string;
  readonly key: string;
  /** `--cname`: ghz dials 127.0.0.1, the certificate names `localhost`. */
  readonly serverName: string;
}

/** ghz's transport security: plaintext, or TLS with a client certificate. */
function securityArgs(tls: GhzTls | undefined): string[] {
  if (tls === undefined) return ['--insecure'];
  return ['--cacert', tls.caCert, '--cert', tls.cert, '--key', tls.key, '--cname', tls.serverName];
}

/**
 * ghz's arguments. Choices that matter for the figures:
 * - `--duration-stop=wait`: when the duration ends, calls in flight finish and are
 *   counted. ghz's default (`close`) cuts the connections and reports those calls as
 *   `Unavailable` errors (25 to 700 per 10 s run in the published Node.js-vs-Go runs),
 *   errors of the load generator, not of the server.
 * - `--cpus`: ghz's GOMAXPROCS equals the CPUs it is pinned to, so its scheduler does
 *   not plan for cores it cannot use.
 * - `--disable-template-functions --disable-template-data`: the request has no
 *   template; without these flags ghz still builds template state per call, load-
 *   generator CPU taken from the measurement. A `templated` call (RevokeJwt) keeps them.
 * - `-O json`: the only machine-readable format with the status and latency distributions.
 */
export function ghzArgs(call: GhzCall): string[] {
  return [
    ...securityArgs(call.tls),
    '--proto',
    GHZ_METHODS[call.method].proto,
    '--call',
    GHZ_METHODS[call.method].call,
    '-d',
    JSON.stringify(call.data),
    ...(call.metadata === undefined ? [] : ['--metadata', JSON.stringify(call.metadata)]),
    '--connections',
    String(call.connections),
    '-c',
    String(call.concurrency),
    ...(call.totalCalls === undefined
      ? ['-z', `${Math.round(call.durationS * 1000)}ms`, '--duration-stop=wait']
      : ['-n', String(call.totalCalls)]),
    '--cpus',
    String(call.cpus),
    ...(call.templated === true ? [] : ['--disable-template-functions', '--disable-template-data']),
    '--name',
    call.name,
    '-O',
    'json',
    '-o',
    call.output,
    `127.0.0.1:${call.port}`,
  ];
}
