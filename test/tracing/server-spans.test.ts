/**
 * Tracing (`tracing: TracerProvider`) over real loopback calls on both transports, with
 * the SDK's in-memory exporter: one SERVER span per call, named and attributed as
 * @opentelemetry/instrumentation-grpc and the RPC semantic conventions write them, its
 * parent from `traceparent` or `grpc-trace-bin`, and `jwt.sign`/`jwt.verify` children
 * that carry the algorithm and kid but never a token.
 */
import { join } from 'node:path';
import { Metadata, credentials } from '@grpc/grpc-js';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CallMetadata, GrpcStatus, GrpcStatusError, type KeySet, createJwtServer, silentLogger } from '../../src/lib/index.js';
import { PROTO_DIR } from '../../src/protos/load.js';
import { ClientPool, DEFAULT_DEADLINE_MS, callError, clientConstructor, unary } from '../../bench/kit/grpc-clients.js';
import { healthCheck } from '../../bench/kit/grpc-extras.js';
import { TRANSPORTS, closeAllServers, sharedKeys, startServer, trackServer } from '../../bench/kit/jwt-servers.js';
import { waitUntil } from '../../bench/kit/wait.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN_ID = '00f067aa0ba902b7';
const JWT_PROTO = join(PROTO_DIR, 'jwt.proto');

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });

/** The finished spans named `name`. */
const spansNamed = (name: string): ReadableSpan[] => exporter.getFinishedSpans().filter((span) => span.name === name);

/** The one finished span named `name`. */
function onlySpan(name: string): ReadableSpan {
  const spans = spansNamed(name);
  expect(spans.map((span) => span.name)).toEqual([name]);
  return spans[0] as ReadableSpan;
}

/** The server span ends as its status is sent, a moment after the client has its answer. */
async function waitForSpan(name: string): Promise<ReadableSpan> {
  await waitUntil(() => spansNamed(name).length > 0, 1000, 10);
  return onlySpan(name);
}

/** A grpc-js unary call to JwtService with `metadata`. */
async function grpcJsCall<Res>(port: number, method: string, request: unknown, metadata: Metadata): Promise<Res> {
  const JwtService = clientConstructor(JWT_PROTO, 'jwt.services.JwtService');
  const client = new JwtService(`127.0.0.1:${port}`, credentials.createInsecure());
  try {
    return await unary<Res>(client, method, request, DEFAULT_DEADLINE_MS, metadata);
  } finally {
    client.close();
  }
}

/** Every attribute value of every span, to check no token leaked into one. */
const allAttributeValues = (): string[] => exporter.getFinishedSpans().flatMap((span) => Object.values(span.attributes).map(String));

afterEach(() => exporter.reset());
afterAll(() => provider.shutdown());

describe.each(TRANSPORTS)('tracing on transport %s', (transport) => {
  const clients = new ClientPool();
  let keys: KeySet;
  let port: number;

  beforeAll(async () => {
    keys = await sharedKeys();
    ({ port } = await startServer({ transport, keys, subjects: ['ada@example.com'], tracing: provider }));
  });

  afterAll(async () => {
    clients.closeAll();
    await closeAllServers();
  });

  it("GenerateJwt from the package client: a SERVER span under the caller's traceparent, with a jwt.sign child", async () => {
    const metadata = new CallMetadata().set('traceparent', `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`).set('tracestate', 'vendor=opaque');
    const response = await clients.jwt(port).generateJwt({ algorithm: 'ES256' }, { metadata });
    const server = await waitForSpan('jwt.services.JwtService/GenerateJwt');
    expect(server.kind).toBe(SpanKind.SERVER);
    expect(server.spanContext().traceId).toBe(TRACE_ID);
    expect(server.parentSpanContext?.spanId).toBe(CALLER_SPAN_ID);
    expect(server.parentSpanContext?.isRemote).toBe(true);
    expect(server.spanContext().traceState?.get('vendor')).toBe('opaque');
    expect(server.attributes).toMatchObject({
      'rpc.system': 'grpc',
      'rpc.service': 'jwt.services.JwtService',
      'rpc.method': 'GenerateJwt',
      'rpc.grpc.status_code': GrpcStatus.OK,
      'network.peer.address': '127.0.0.1',
    });
    expect(server.attributes['network.peer.port']).toBeTypeOf('number');
    expect(server.status.code).toBe(SpanStatusCode.UNSET);
    expect(server.instrumentationScope.name).toBe('jwt-grpc');

    const sign = onlySpan('jwt.sign');
    expect(sign.spanContext().traceId).toBe(TRACE_ID);
    expect(sign.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    expect(sign.attributes).toEqual({ 'jwt.alg': 'ES256', 'jwt.kid': response.kid });
    expect(allAttributeValues().some((value) => value.includes(response.jwt) || value.includes('ada@example.com'))).toBe(false);
  });

  it('VerifyJwt from a grpc-js client: the parent from grpc-trace-bin, a jwt.verify child with the kid of a valid token', async () => {
    const { jwt: token, kid } = await clients.jwt(port).generateJwt({ algorithm: 'HS256' });
    exporter.reset();
    // OpenCensus binary format: version 0, field 0 trace id, field 1 span id, field 2 options (sampled).
    const traceBin = Buffer.concat([
      Buffer.from([0, 0]),
      Buffer.from(TRACE_ID, 'hex'),
      Buffer.from([1]),
      Buffer.from(CALLER_SPAN_ID, 'hex'),
      Buffer.from([2, 1]),
    ]);
    const metadata = new Metadata();
    metadata.set('grpc-trace-bin', traceBin);
    const response = await grpcJsCall<{ valid: boolean }>(port, 'VerifyJwt', { jwt: token }, metadata);
    expect(response.valid).toBe(true);
    const server = await waitForSpan('jwt.services.JwtService/VerifyJwt');
    expect(server.spanContext().traceId).toBe(TRACE_ID);
    expect(server.parentSpanContext?.spanId).toBe(CALLER_SPAN_ID);
    const verify = onlySpan('jwt.verify');
    expect(verify.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    expect(verify.attributes).toEqual({ 'jwt.alg': 'HS256', 'jwt.kid': kid, 'jwt.valid': true });
    expect(allAttributeValues().some((value) => value.includes(token))).toBe(false);
  });

  it('an invalid token: jwt.verify records the reason only, and a call without trace context starts a new trace', async () => {
    const forged = 'eyJhbGciOiJIUzI1NiIsImtpZCI6ImF0dGFja2VyIn0.eyJzdWIiOiJ4In0.c2ln';
    expect((await clients.jwt(port).verifyJwt({ jwt: forged })).valid).toBe(false);
    const server = await waitForSpan('jwt.services.JwtService/VerifyJwt');
    expect(server.parentSpanContext).toBeUndefined();
    expect(onlySpan('jwt.verify').attributes).toEqual({ 'jwt.valid': false, 'jwt.reason': 'UNKNOWN_KEY' });
  });

  it('a malformed traceparent and a truncated grpc-trace-bin are ignored (a new trace), and a caller error is no server error', async () => {
    const metadata = new Metadata();
    metadata.set('traceparent', `00-${'0'.repeat(32)}-${CALLER_SPAN_ID}-01`);
    metadata.set('grpc-trace-bin', Buffer.concat([Buffer.from([0, 0]), Buffer.from(TRACE_ID, 'hex'), Buffer.from([1, 0xab])]));
    const err = await callError(grpcJsCall(port, 'GenerateJwt', { algorithm: 'NOPE' }, metadata));
    expect(err.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    const server = await waitForSpan('jwt.services.JwtService/GenerateJwt');
    expect(server.parentSpanContext).toBeUndefined();
    expect(server.attributes['rpc.grpc.status_code']).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(server.status.code).toBe(SpanStatusCode.UNSET);
    // The child failed: its status says how by code, never with the message, which may quote the request.
    expect(onlySpan('jwt.sign').status).toEqual({ code: SpanStatusCode.ERROR, message: 'ERR_INVALID_REQUEST' });
  });

  it('health checks are traced like any other call', async () => {
    expect(await healthCheck(port, '')).toBe('SERVING');
    expect((await waitForSpan('grpc.health.v1.Health/Check')).attributes).toMatchObject({
      'rpc.service': 'grpc.health.v1.Health',
      'rpc.method': 'Check',
    });
  });

  it('a handler that fails with INTERNAL makes the server span ERROR', async () => {
    const server = trackServer(
      createJwtServer({ transport, keys, logger: silentLogger, tracing: provider, health: false, reflection: false }),
    );
    server.addService(
      {
        Fail: {
          path: '/demo.Failing/Fail',
          requestStream: false,
          responseStream: false,
          requestDeserialize: (bytes: Buffer) => bytes,
          responseSerialize: (bytes: Buffer) => bytes,
          requestSerialize: (bytes: Buffer) => bytes,
          responseDeserialize: (bytes: Buffer) => bytes,
        },
      },
      {
        Fail: () => {
          throw new GrpcStatusError(GrpcStatus.INTERNAL, 'broken on purpose');
        },
      },
    );
    const failingPort = await server.listen('127.0.0.1:0');
    const { Client } = await import('@grpc/grpc-js');
    const client = new Client(`127.0.0.1:${failingPort}`, credentials.createInsecure());
    const err = await callError(
      new Promise((resolve, reject) =>
        client.makeUnaryRequest(
          '/demo.Failing/Fail',
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.alloc(0),
          (e, r) => (e ? reject(e) : resolve(r)),
        ),
      ),
    );
    client.close();
    expect(err.code).toBe(GrpcStatus.INTERNAL);
    const span = await waitForSpan('demo.Failing/Fail');
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'broken on purpose' });
    expect(span.attributes['rpc.grpc.status_code']).toBe(GrpcStatus.INTERNAL);
  });
});

describe.each(TRANSPORTS)('OTEL_SEMCONV_STABILITY_OPT_IN on transport %s', (transport) => {
  afterEach(async () => {
    vi.unstubAllEnvs();
    await closeAllServers();
  });

  /** The attributes (the ephemeral peer port aside) of the span of a GenerateJwt that ends INVALID_ARGUMENT, with `optIn` set. */
  async function spanAttributes(optIn: string): Promise<Record<string, unknown>> {
    vi.stubEnv('OTEL_SEMCONV_STABILITY_OPT_IN', optIn);
    const { port } = await startServer({ transport, keys: await sharedKeys(), tracing: provider });
    const clients = new ClientPool();
    await callError(clients.jwt(port).generateJwt({ algorithm: 'HS256' })); // no subject, no pool: INVALID_ARGUMENT
    clients.closeAll();
    const { 'network.peer.port': _port, ...attributes } = (await waitForSpan('jwt.services.JwtService/GenerateJwt')).attributes;
    return attributes;
  }

  it('rpc: the stable conventions only', async () => {
    expect(await spanAttributes('http,rpc')).toEqual({
      'rpc.system.name': 'grpc',
      'rpc.method': 'jwt.services.JwtService/GenerateJwt',
      'rpc.status_code': 'INVALID_ARGUMENT',
      'network.peer.address': '127.0.0.1',
    });
  });

  it('rpc/dup: both, rpc.method in its stable form', async () => {
    expect(await spanAttributes('rpc/dup')).toEqual({
      'rpc.system': 'grpc',
      'rpc.service': 'jwt.services.JwtService',
      'rpc.system.name': 'grpc',
      'rpc.method': 'jwt.services.JwtService/GenerateJwt',
      'rpc.grpc.status_code': GrpcStatus.INVALID_ARGUMENT,
      'rpc.status_code': 'INVALID_ARGUMENT',
      'network.peer.address': '127.0.0.1',
    });
  });
});

describe('tracing: true, configured by OTEL_* variables', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('refuses an unknown sampler or a sampler ratio out of range, naming the variable', () => {
    vi.stubEnv('OTEL_TRACES_SAMPLER', 'sometimes');
    expect(() => createJwtServer({ tracing: true })).toThrow(/OTEL_TRACES_SAMPLER\b.*sometimes/);
    vi.stubEnv('OTEL_TRACES_SAMPLER', 'parentbased_traceidratio');
    vi.stubEnv('OTEL_TRACES_SAMPLER_ARG', '1.5');
    expect(() => createJwtServer({ tracing: true })).toThrow(/OTEL_TRACES_SAMPLER_ARG/);
  });

  it('refuses an OTLP protocol the specification does not name rather than sending nothing', () => {
    vi.stubEnv('OTEL_EXPORTER_OTLP_PROTOCOL', 'http/thrift');
    expect(() => createJwtServer({ tracing: true })).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL.*one of http\/protobuf, http\/json, grpc; got "http\/thrift"/,
    );
    vi.stubEnv('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'grpc-web');
    expect(() => createJwtServer({ tracing: true })).toThrow(/OTEL_EXPORTER_OTLP_TRACES_PROTOCOL.*got "grpc-web"/);
  });
});

describe('the tracing option', () => {
  it('refuses what is neither a boolean nor a TracerProvider, naming it', () => {
    expect(() => createJwtServer({ tracing: 'yes' as never })).toThrow(/tracing/);
    expect(() => createJwtServer({ tracing: {} as never })).toThrow(/TracerProvider/);
  });

  it('off by default: a server without it records no span, even with a global TracerProvider registered', async () => {
    // (The client's own CLIENT span does use the global provider: that one is the caller's.)
    trace.setGlobalTracerProvider(provider);
    const keys = await sharedKeys();
    const { port } = await startServer({ transport: 'http2', keys, subjects: ['ada@example.com'] });
    const clients = new ClientPool();
    await clients.jwt(port).generateJwt({ algorithm: 'HS256' });
    clients.closeAll();
    await closeAllServers();
    trace.disable();
    expect(exporter.getFinishedSpans().map((span) => `${span.kind} ${span.name}`)).toEqual([
      `${SpanKind.CLIENT} jwt.services.JwtService/GenerateJwt`,
    ]);
  });
});
