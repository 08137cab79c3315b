/**
 * Dependencies that only some servers use, loaded on their first use: @grpc/grpc-js (the
 * `grpc-js` transport and the client side), @grpc/proto-loader (health, reflection), prom-client (`--metrics-port`, a user's
 * registry) and pino (`--log-format json`). A `jwt-grpc serve` on its own transport with
 * text logs loads none of them: each adds tens of megabytes of resident memory once
 * required, which a server that never calls it should not carry (bench/PERFORMANCE.md has
 * the measured numbers). They are CommonJS packages, so `require` loads them
 * synchronously and the APIs that use them stay synchronous.
 */
import { createRequire } from 'node:module';
import { JwtGrpcError } from './errors.js';

const requireModule = createRequire(import.meta.url);

/**
 * What to run to install those of `packages` that cannot be resolved from here: one line,
 * `npm install a b`, for an error to end with. They are optional peer dependencies (an app
 * that never turns their feature on does not carry them), so the app installs them itself.
 * @internal
 *
 * @example
 * ```ts
 * throw invalidOption('revocationStore', `a redis:// store needs node-redis: ${installHint(['redis'])}`);
 * ```
 */
export function installHint(packages: readonly string[]): string {
  const missing = packages.filter((name) => {
    try {
      requireModule.resolve(name.replace(/(?<=.)@.*$/, '')); // `redis@^5`: the package's name
      return false;
    } catch {
      return true;
    }
  });
  return `npm install ${(missing.length === 0 ? packages : missing).join(' ')}`;
}

/** A module loaded on the first call, then the same one every call. */
function onFirstUse<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= requireModule(specifier) as T);
}

let loadedGrpcJs: typeof import('@grpc/grpc-js') | undefined;

/**
 * @grpc/grpc-js, loaded on first use. Written as a literal `require('@grpc/grpc-js')`, so
 * that a bundler (esbuild, webpack, rollup's commonjs plugin) follows it into a single-file
 * bundle of the app (docs/library.md, "Bundling"); in Node's ES modules, which have no
 * `require`, this module's own `createRequire` loads it. @internal
 *
 * @example
 * ```ts
 * const server = new (grpcJs().Server)(channelOptions);
 * ```
 */
export function grpcJs(): typeof import('@grpc/grpc-js') {
  loadedGrpcJs ??= (
    typeof require === 'function' ? require('@grpc/grpc-js') : requireModule('@grpc/grpc-js')
  ) as typeof import('@grpc/grpc-js');
  return loadedGrpcJs;
}

/**
 * @grpc/proto-loader (and protobufjs under it), loaded on first use: by a health or
 * reflection call's codecs. JwtService's codecs are this package's own on both sides
 * (src/jwt-service/codec/), so a server starts and answers GenerateJwt, and a client (the
 * `token` command's included) makes its calls, without parsing a .proto file. @internal
 *
 * @example
 * ```ts
 * const definition = protoLoader().loadSync('proto/jwt.proto');
 * ```
 */
export const protoLoader = onFirstUse<typeof import('@grpc/proto-loader')>('@grpc/proto-loader');

/**
 * node:http, through `require` rather than `import`, on first use (the discovery and metrics
 * ports). An ES import of a builtin reads every export it has, and node:http's include lazy
 * getters that load Node's bundled undici (its WebSocket and fetch classes): about 30 ms of
 * every start on one core, for a server that may serve no HTTP at all (bench/PERFORMANCE.md,
 * "Start-up"). @internal
 *
 * @example
 * ```ts
 * const server = nodeHttp().createServer((request, response) => response.end());
 * ```
 */
export const nodeHttp = onFirstUse<typeof import('node:http')>('node:http');

/**
 * node:https, through `require` on first use, for the same reason as {@link nodeHttp}. @internal
 *
 * @example
 * ```ts
 * const server = nodeHttps().createServer({ key, cert }, (request, response) => response.end());
 * ```
 */
export const nodeHttps = onFirstUse<typeof import('node:https')>('node:https');

/**
 * node:tls, through `require` on first use: a plaintext server never needs it, and loading
 * it costs about 18 ms of a start on one core (`node -e "require('node:tls')"` against
 * `node -e 0`, 7 runs pinned: 46.6 against 28.4 ms; bench/PERFORMANCE.md, "Start-up"). @internal
 *
 * @example
 * ```ts
 * const server = nodeTls().createServer({ key, cert, ALPNProtocols: ['h2'] });
 * ```
 */
export const nodeTls = onFirstUse<typeof import('node:tls')>('node:tls');

/**
 * node:http2, through `require` on first use: only the grpc-js transport's memory guards
 * use it (its constants), and it loads node:tls and node:http with it (about 27 ms of a start
 * on one core, measured as {@link nodeTls}). @internal
 *
 * @example
 * ```ts
 * session.goaway(nodeHttp2().constants.NGHTTP2_ENHANCE_YOUR_CALM);
 * ```
 */
export const nodeHttp2 = onFirstUse<typeof import('node:http2')>('node:http2');

/**
 * node:zlib, through `require` on first use: per-message compression and status lists,
 * which most calls and most servers never use. @internal
 *
 * @example
 * ```ts
 * const packed = nodeZlib().deflateSync(bytes);
 * ```
 */
export const nodeZlib = onFirstUse<typeof import('node:zlib')>('node:zlib');

/**
 * prom-client, loaded on first use. @internal
 *
 * @example
 * ```ts
 * const registry = new (promClient().Registry)();
 * ```
 */
export const promClient = onFirstUse<typeof import('prom-client')>('prom-client');

/**
 * pino, loaded on first use. @internal
 *
 * @example
 * ```ts
 * const log = pinoModule().pino({ level: 'info' });
 * ```
 */
export const pinoModule = onFirstUse<typeof import('pino')>('pino');

/**
 * The OpenTelemetry API, loaded on first use: by a server that traces (tracing on), or by
 * a client call once the app has registered an SDK ({@link otelRegistered}). A service
 * that only verifies, and traces nothing, never loads it: 51 modules and 20-37 ms of
 * `import('jwt-grpc/client')` otherwise. Required rather than imported, so it may be
 * another copy of the module than the app's, which is fine: every copy keeps its globals
 * (provider, propagator, context manager) in the one place {@link otelRegistered} reads. @internal
 *
 * @example
 * ```ts
 * const span = otelApi().trace.getSpan(context);
 * ```
 */
export const otelApi = onFirstUse<typeof import('@opentelemetry/api')>('@opentelemetry/api');

/** Where API 1.x keeps its registered globals (https://github.com/open-telemetry/opentelemetry-js/blob/main/api/src/internal/global-utils.ts). */
const OTEL_GLOBAL_KEY = Symbol.for('opentelemetry.js.api.1');

/**
 * Whether the app has registered anything with the OpenTelemetry API (a TracerProvider, a
 * propagator or a context manager, as every SDK's `register()` does): until then every
 * tracer and propagator of the API is a no-op, so the client's spans are skipped without
 * loading it. Read at each call: an SDK registered later is used from then on. @internal
 *
 * @example
 * ```ts
 * const span = otelRegistered() ? otelApi().trace.getTracer('jwt-grpc').startSpan('GetJwks') : undefined;
 * ```
 */
export function otelRegistered(): boolean {
  return (globalThis as Record<symbol, unknown>)[OTEL_GLOBAL_KEY] !== undefined;
}

/**
 * The OpenTelemetry tracing SDK, loaded when `tracing: true` (`--otel`) builds jwt-grpc's
 * own TracerProvider; a server given a TracerProvider, or none, never loads it. @internal
 *
 * @example
 * ```ts
 * const provider = new (otelSdkTrace().TracerProvider)({});
 * ```
 */
export const otelSdkTrace = onFirstUse<typeof import('@opentelemetry/sdk-trace')>('@opentelemetry/sdk-trace');

/**
 * The OpenTelemetry resources (service name, process attributes), loaded with the SDK. @internal
 *
 * @example
 * ```ts
 * const resource = otelResources().resourceFromAttributes({ 'service.name': 'jwt-grpc' });
 * ```
 */
export const otelResources = onFirstUse<typeof import('@opentelemetry/resources')>('@opentelemetry/resources');

/**
 * The OTLP/HTTP trace exporter, loaded with the SDK. @internal
 *
 * @example
 * ```ts
 * const exporter = new (otlpHttpTraceExporter().OTLPTraceExporter)();
 * ```
 */
export const otlpHttpTraceExporter = onFirstUse<typeof import('@opentelemetry/exporter-trace-otlp-http')>(
  '@opentelemetry/exporter-trace-otlp-http',
);

/**
 * The OTLP/HTTP protobuf trace exporter (`OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf`, the
 * protocol's default), loaded with the SDK. @internal
 *
 * @example
 * ```ts
 * const exporter = new (otlpProtoTraceExporter().OTLPTraceExporter)();
 * ```
 */
export const otlpProtoTraceExporter = onFirstUse<typeof import('@opentelemetry/exporter-trace-otlp-proto')>(
  '@opentelemetry/exporter-trace-otlp-proto',
);

/**
 * The AsyncLocalStorage context manager, loaded with the SDK: `tracing: true` registers it
 * when the process has none, so that handlers run in their call's span context. @internal
 *
 * @example
 * ```ts
 * context.setGlobalContextManager(new (otelContextAsyncHooks().AsyncLocalStorageContextManager)());
 * ```
 */
export const otelContextAsyncHooks = onFirstUse<typeof import('@opentelemetry/context-async-hooks')>('@opentelemetry/context-async-hooks');

/**
 * The OTLP/gRPC trace exporter (`OTEL_EXPORTER_OTLP_PROTOCOL=grpc`), loaded only when that
 * protocol is chosen: it brings @grpc/grpc-js with it. @internal
 *
 * @example
 * ```ts
 * const exporter = new (otlpGrpcTraceExporter().OTLPTraceExporter)();
 * ```
 */
export const otlpGrpcTraceExporter = onFirstUse<typeof import('@opentelemetry/exporter-trace-otlp-grpc')>(
  '@opentelemetry/exporter-trace-otlp-grpc',
);

/**
 * node-redis (the `redis` package), loaded when `--revocation-store redis://...` (or
 * `rediss://`) creates the Redis revocation store; every other server never loads it, and
 * an app that has not installed it (an optional peer dependency) works until that option is given.
 * @internal
 *
 * @example
 * ```ts
 * const client = redisModule().createClient({ url: 'redis://127.0.0.1:6379/0' });
 * ```
 */
export const redisModule = onFirstUse<typeof import('redis')>('redis');

/**
 * pkcs11js, loaded when a key file names a PKCS#11 key (`"pkcs11": "pkcs11:..."`); every
 * other server never loads it (an optional peer dependency with a native addon). @internal
 *
 * @example
 * ```ts
 * const module = new (pkcs11Module().PKCS11)();
 * ```
 */
export const pkcs11Module = onFirstUse<typeof import('pkcs11js')>('pkcs11js');

/**
 * The AWS SDK's KMS client, loaded when a key file names an AWS KMS key (`"kms": "alias/..."`). @internal
 *
 * @example
 * ```ts
 * const client = new (kmsModule().KMSClient)({});
 * ```
 */
export const kmsModule = onFirstUse<typeof import('@aws-sdk/client-kms')>('@aws-sdk/client-kms');

/**
 * Loads an optional package with `load`, or throws the one-line "install it" error that
 * names what needed it. @internal
 *
 * @example
 * ```ts
 * const pkcs11 = requireOptional(pkcs11Module, 'pkcs11js', 'a pkcs11 key');
 * ```
 */
export function requireOptional<T>(load: () => T, packageName: string, neededBy: string): T {
  try {
    return load();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    throw new JwtGrpcError(
      'ERR_INVALID_KEY',
      `${neededBy} needs ${packageName}, an optional peer dependency not installed here: ${installHint([packageName])}`,
      { cause: err },
    );
  }
}
