/**
 * The opt-in rows of ours (bench/README.md, "Opt-in rows"): each needs something the run
 * makes first (macro/row-assets.ts) and answers one question, selected with `--features`
 * (macro/features.ts). servers.ts turns each into a server with the recommended V8 flags.
 */
import { REVOCATION_PRELOAD } from '../revocation/entries.js';
import type { RowAssets } from './row-assets.js';
import type { OursRow } from './row.js';

/** A row of ours but its V8 flags (servers.ts adds the recommended ones). */
export type OptInRow = Omit<OursRow, 'v8Flags'>;

/** Requests a second of the background JWKS load of `jwt-grpc-jwks-load`. */
export const JWKS_BACKGROUND_RPS = 1000;

function required<T>(name: string, what: string, value: T | null): T {
  if (value === null) throw new Error(`${name}: ${what} was not prepared`);
  return value;
}

/** `serve`'s mutual-TLS options, with the run's test certificates. */
function mtlsArgs(name: string, assets: RowAssets): string[] {
  const tls = required(name, 'the test certificates', assets.tls);
  return ['--tls-cert', tls.serverCert, '--tls-key', tls.serverKey, '--tls-client-ca', tls.clientCa];
}

/**
 * The OpenTelemetry SDK's variables of a tracing row: the `traceidratio` sampler at `ratio`
 * (no parent: ghz sends no traceparent), OTLP/HTTP protobuf to the run's sink.
 */
export function tracingEnv(endpoint: string, ratio: string): Record<string, string> {
  return {
    OTEL_TRACES_SAMPLER: 'traceidratio',
    OTEL_TRACES_SAMPLER_ARG: ratio,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
  };
}

/** `serve`'s revocation options: the run's admin secret, and the pre-loaded file unless `store` names another store's options. */
export function revocationArgs(name: string, assets: RowAssets, store?: readonly string[]): string[] {
  const files = required(name, 'the revocations file and admin secret', assets.revocations);
  return [...(store ?? ['--revocations', files.file]), '--admin-token-file', files.adminTokenFile];
}

/** A row of ours with `--otel`, sampling `ratio` of the calls. */
function tracingRow(name: string, ratio: string): OptInRow {
  return {
    name,
    role: 'variant',
    groups: ['single'],
    methods: ['GenerateJwt'],
    cluster: false,
    transport: 'http2',
    serveArgs: ['--otel'],
    assetEnv: (assets) => tracingEnv(required(name, 'the OTLP sink', assets.otlpTracesEndpoint), ratio),
    needs: ['otlp-sink'],
    optIn: true,
    verifyCache: false,
    description:
      `this package with \`--otel\`, \`OTEL_TRACES_SAMPLER=traceidratio\`, \`OTEL_TRACES_SAMPLER_ARG=${ratio}\`: a SERVER span per call, ` +
      `${ratio === '1.0' ? 'every one' : `${Number(ratio) * 100} % of them`} sampled and exported over OTLP/HTTP (batched) to a sink on the load generator's CPU`,
  };
}

export const OPT_IN_ROWS: readonly OptInRow[] = [
  {
    name: 'jwt-grpc-mtls',
    role: 'variant',
    groups: ['single'],
    methods: ['GenerateJwt'],
    cluster: false,
    transport: 'http2',
    assetArgs: (assets) => mtlsArgs('jwt-grpc-mtls', assets),
    needs: ['mtls'],
    optIn: true,
    verifyCache: false,
    description:
      "this package serving mutual TLS (`--tls-cert --tls-key --tls-client-ca`, EC P-256 test certificates made at the run's start), ghz presenting its client certificate; no policy (open mode)",
  },
  {
    name: 'jwt-grpc-mtls-policy',
    role: 'variant',
    groups: ['single'],
    methods: ['GenerateJwt'],
    cluster: false,
    transport: 'http2',
    assetArgs: (assets) => [
      ...mtlsArgs('jwt-grpc-mtls-policy', assets),
      '--policy',
      required('jwt-grpc-mtls-policy', 'the policy file', assets.tls).policyFile,
    ],
    needs: ['mtls'],
    optIn: true,
    verifyCache: false,
    description:
      "the same with `--policy`: one caller (ghz's certificate, `spiffe://bench.jwt-grpc.test/ghz`) allowed one subject and the run's algorithms; every GenerateJwt is checked against it",
  },
  tracingRow('jwt-grpc-otel-1', '1.0'),
  tracingRow('jwt-grpc-otel-0.01', '0.01'),
  {
    name: 'jwt-grpc-default',
    role: 'variant',
    groups: ['single'],
    methods: ['GenerateJwt'],
    cluster: false,
    transport: 'http2',
    verifyIssued: false,
    optIn: true,
    verifyCache: false,
    description:
      'this package without `--verify-issued`, as `serve` runs by default: GenerateJwt signs and answers, without the verify of the token just signed that the peers (and every other row of ours) do',
  },
  {
    name: 'jwt-grpc-jti',
    role: 'variant',
    groups: ['single'],
    methods: ['GenerateJwt', 'VerifyJwt'],
    cluster: false,
    transport: 'http2',
    jti: true,
    optIn: true,
    verifyCache: false,
    description:
      "this package with its default `jti` (no `--no-jti`): a 22-character random id in every token; no store, RevokeJwt off, so VerifyJwt's revocation set is empty",
  },
  {
    name: 'jwt-grpc-revocation',
    role: 'variant',
    groups: ['single'],
    methods: ['GenerateJwt', 'VerifyJwt'],
    cluster: false,
    transport: 'http2',
    jti: true,
    assetArgs: (assets) => revocationArgs('jwt-grpc-revocation', assets),
    needs: ['revocations'],
    optIn: true,
    verifyCache: false,
    description:
      `this package with revocation on: \`jti\`, \`--revocations FILE\` (an append-only file in the run's temporary folder, ${REVOCATION_PRELOAD.toLocaleString('en-US')} live entries written before the start), ` +
      "`--admin-token-file`; every VerifyJwt looks its token's jti up in the set (a miss: the token is not revoked)",
  },
  {
    name: 'jwt-grpc-jwks-load',
    role: 'variant',
    groups: ['single'],
    methods: ['GenerateJwt'],
    cluster: false,
    transport: 'http2',
    serveArgs: ['--http-port', '0', '--issuer', 'http://127.0.0.1'],
    needs: ['h2load'],
    optIn: true,
    backgroundLoad: { kind: 'jwks', rps: JWKS_BACKGROUND_RPS },
    verifyCache: false,
    description: `this package with discovery on (\`--http-port 0 --issuer http://127.0.0.1\`) while h2load GETs its JWK Set ${JWKS_BACKGROUND_RPS} times a second (HTTP/1.1, 10 connections, on the load generator's CPU) during every measurement; the server's CPU answering them counts`,
  },
];
