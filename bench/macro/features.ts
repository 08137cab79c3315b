/**
 * `--features NAME,...`: the rows and cells of one question each, so that one command runs
 * exactly what that question needs. A feature names its servers (the row and what it is
 * compared with), the cells (scenario id filters, as `--cells`), and whether the run also
 * measures the JWK Set over HTTP at saturation, or RevokeJwt on each store. `--servers` and `--cells`, when given too,
 * replace the feature's.
 */
export interface Feature {
  readonly servers: readonly string[];
  readonly cells: readonly string[];
  /** Also measure GET /.well-known/jwks.json at saturation (macro/jwks-throughput.ts). */
  readonly jwksThroughput: boolean;
  /** Also measure RevokeJwt's throughput on each store (macro/revoke-throughput.ts). */
  readonly revokeThroughput: boolean;
  /** Also measure ES256 GenerateJwt with the key in these backends against in memory (keys/backends.ts). */
  readonly keyBackends: readonly ('pkcs11' | 'kms')[];
  readonly description: string;
}

/** GenerateJwt, HS256 and ES256, one server core, both load shapes (1x50 and 5x250). */
const GENERATE_1C = ['single-hs256-', 'single-es256-'];
/** GenerateJwt and VerifyJwt, HS256 and ES256, 1 connection x 50 in flight on one server core. */
const GENERATE_VERIFY_1X50 = ['single-hs256-1x50', 'single-es256-1x50', 'single-verify-hs256-1x50', 'single-verify-es256-1x50'];

export const FEATURES = {
  'mtls-policy': {
    servers: ['jwt-grpc-mtls', 'jwt-grpc-mtls-policy'],
    cells: GENERATE_1C,
    jwksThroughput: false,
    revokeThroughput: false,
    keyBackends: [],
    description: 'mutual TLS with a policy against mutual TLS alone (ratio `mTLS+policy / mTLS`)',
  },
  tracing: {
    servers: ['jwt-grpc', 'jwt-grpc-otel-1', 'jwt-grpc-otel-0.01'],
    cells: GENERATE_1C,
    jwksThroughput: false,
    revokeThroughput: false,
    keyBackends: [],
    description: 'tracing on, sampling 1.0 and 0.01, against off (add --baseline-ref for off against the code before tracing)',
  },
  'jwks-load': {
    servers: ['jwt-grpc', 'jwt-grpc-jwks-load'],
    cells: GENERATE_1C,
    jwksThroughput: true,
    revokeThroughput: false,
    keyBackends: [],
    description: 'GenerateJwt with 1,000 JWKS GETs a second beside it against without; and JWKS GETs/s per core at saturation',
  },
  revocation: {
    servers: ['jwt-grpc', 'jwt-grpc-jti', 'jwt-grpc-revocation'],
    cells: GENERATE_VERIFY_1X50,
    jwksThroughput: false,
    revokeThroughput: true,
    keyBackends: [],
    description:
      'GenerateJwt and VerifyJwt with jti and with revocation on (a pre-loaded file) against off; and RevokeJwt/s on each store (memory, file, Redis)',
  },
  'verify-issued': {
    servers: ['jwt-grpc', 'jwt-grpc-default'],
    cells: GENERATE_1C,
    jwksThroughput: false,
    revokeThroughput: false,
    keyBackends: [],
    description:
      "GenerateJwt as serve runs by default (no verify of the token just signed) against --verify-issued, the peers' work (ratio `default / --verify-issued`)",
  },
  pkcs11: {
    servers: ['jwt-grpc'],
    cells: ['single-es256-1x50'],
    jwksThroughput: false,
    revokeThroughput: false,
    keyBackends: ['pkcs11'],
    description:
      'ES256 GenerateJwt with the key in SoftHSM2 (PKCS#11) against in memory, 1, 8 and 64 in flight: calls/s, CPU per call, p99',
  },
  kms: {
    servers: ['jwt-grpc'],
    cells: ['single-es256-1x50'],
    jwksThroughput: false,
    revokeThroughput: false,
    keyBackends: ['kms'],
    description:
      'ES256 GenerateJwt with the key in local-kms (the AWS KMS API) against in memory, 1, 8 and 64 in flight: calls/s, CPU per call, p99',
  },
} as const satisfies Record<string, Feature>;

export type FeatureName = keyof typeof FEATURES;
export const FEATURE_NAMES = Object.keys(FEATURES) as FeatureName[];

/** The union of the features' servers and cells, in order, without repeats. */
export function featureSelection(names: readonly FeatureName[]): {
  servers: string[];
  cells: string[];
  jwksThroughput: boolean;
  revokeThroughput: boolean;
  keyBackends: ('pkcs11' | 'kms')[];
} {
  const features: readonly Feature[] = names.map((name) => FEATURES[name]);
  return {
    servers: [...new Set(features.flatMap((f) => f.servers))],
    cells: [...new Set(features.flatMap((f) => f.cells))],
    jwksThroughput: features.some((f) => f.jwksThroughput),
    revokeThroughput: features.some((f) => f.revokeThroughput),
    keyBackends: [...new Set(features.flatMap((f) => f.keyBackends))],
  };
}
