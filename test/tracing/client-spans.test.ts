/**
 * The client side: with an OpenTelemetry SDK registered in the calling process, the
 * package's client (createJwtClient, and createRemoteVerifier built on it) makes a CLIENT
 * span per call under the active span and sends its context as `traceparent`, so that a
 * caller, its call and the server's spans are one trace.
 */
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANY_AUDIENCE, CallMetadata, GrpcStatus, createJwtClient, createRemoteVerifier, jwtAuthInterceptor } from '../../src/lib/index.js';
import { ClientPool, callError } from '../../bench/kit/grpc-clients.js';
import { TRANSPORTS, closeAllServers, sharedKeys, startServer } from '../../bench/kit/jwt-servers.js';
import { useGlobalTracing } from './global-sdk.js';
import { waitUntil } from '../../bench/kit/wait.js';

const { exporter, provider } = useGlobalTracing();

/** The finished span named `name` of `kind`, waiting a moment for the server's, which ends after the client has its answer. */
async function spanOf(name: string, kind: SpanKind): Promise<ReadableSpan> {
  const find = () => exporter.getFinishedSpans().filter((span) => span.name === name && span.kind === kind);
  await waitUntil(() => find().length > 0, 1000, 10);
  expect(find()).toHaveLength(1);
  return find()[0] as ReadableSpan;
}

describe.each(TRANSPORTS)('createJwtClient with an SDK registered, server on transport %s', (transport) => {
  const clients = new ClientPool();
  let port: number;

  beforeAll(async () => {
    ({ port } = await startServer({ transport, keys: await sharedKeys(), subjects: ['ada@example.com'], tracing: provider }));
  });
  afterAll(async () => {
    clients.closeAll();
    await closeAllServers();
  });

  it('caller -> CLIENT span -> SERVER span -> jwt.sign, one trace', async () => {
    const jwt = clients.jwt(port);
    const caller = trace.getTracer('test');
    await caller.startActiveSpan('caller', async (span) => {
      await jwt.generateJwt({ algorithm: 'HS256' });
      span.end();
    });
    const callerSpan = await spanOf('caller', SpanKind.INTERNAL);
    const client = await spanOf('jwt.services.JwtService/GenerateJwt', SpanKind.CLIENT);
    const server = await spanOf('jwt.services.JwtService/GenerateJwt', SpanKind.SERVER);
    const sign = await spanOf('jwt.sign', SpanKind.INTERNAL);
    const traceId = callerSpan.spanContext().traceId;
    for (const span of [client, server, sign]) expect(span.spanContext().traceId).toBe(traceId);
    expect(client.parentSpanContext?.spanId).toBe(callerSpan.spanContext().spanId);
    expect(server.parentSpanContext?.spanId).toBe(client.spanContext().spanId);
    expect(sign.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    expect(client.attributes).toEqual({
      'rpc.system': 'grpc',
      'rpc.service': 'jwt.services.JwtService',
      'rpc.method': 'GenerateJwt',
      'rpc.grpc.status_code': GrpcStatus.OK,
    });
  });

  it('a failed call: the CLIENT span is ERROR with the status code', async () => {
    const err = await callError(clients.jwt(port).generateJwt({ algorithm: 'NOPE' }));
    expect(err.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    const client = await spanOf('jwt.services.JwtService/GenerateJwt', SpanKind.CLIENT);
    expect(client.attributes['rpc.grpc.status_code']).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(client.status).toEqual({ code: SpanStatusCode.ERROR, message: err.details });
  });
});

describe.each(TRANSPORTS)('a protected service on transport %s, its verifier remote', (transport) => {
  const clients = new ClientPool();
  afterAll(async () => {
    clients.closeAll();
    await closeAllServers();
  });

  it("caller -> greeter (jwtAuthInterceptor's jwt.verify) -> issuer GetJwks, one trace", async () => {
    const keys = await sharedKeys();
    const issuerPort = (await startServer({ transport, keys, subjects: ['ada@example.com'], tracing: provider })).port;
    const issuer = clients.track(createJwtClient(`127.0.0.1:${issuerPort}`));
    const verifier = createRemoteVerifier(issuer, { audience: ANY_AUDIENCE });
    // The greeter: any jwt-grpc server whose calls the interceptor protects (its own GetJwks will do).
    const greeterPort = (await startServer({ transport, keys, tracing: provider, interceptors: [jwtAuthInterceptor(verifier)] })).port;
    const { jwt: token } = await issuer.generateJwt({ algorithm: 'ES256' });
    exporter.reset();

    const greeter = clients.jwt(greeterPort);
    await trace.getTracer('test').startActiveSpan('caller', async (span) => {
      await greeter.getJwks({}, { metadata: new CallMetadata().set('authorization', `Bearer ${token}`) });
      span.end();
    });
    const callerSpan = await spanOf('caller', SpanKind.INTERNAL);
    // Two GetJwks server spans: the greeter's (the caller's call) and the issuer's (the verifier's fetch).
    await waitUntil(() => exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER).length >= 2, 1000, 10);
    const servers = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER && s.name === 'jwt.services.JwtService/GetJwks');
    const clientsSpans = exporter
      .getFinishedSpans()
      .filter((s) => s.kind === SpanKind.CLIENT && s.name === 'jwt.services.JwtService/GetJwks');
    const verify = await spanOf('jwt.verify', SpanKind.INTERNAL);
    const callerClient = clientsSpans.find((s) => s.parentSpanContext?.spanId === callerSpan.spanContext().spanId);
    const greeterServer = servers.find((s) => s.parentSpanContext?.spanId === callerClient?.spanContext().spanId);
    expect(verify.parentSpanContext?.spanId).toBe(greeterServer?.spanContext().spanId);
    expect(verify.attributes).toEqual({ 'jwt.valid': true });
    const fetch = clientsSpans.find((s) => s.parentSpanContext?.spanId === verify.spanContext().spanId);
    const issuerServer = servers.find((s) => s.parentSpanContext?.spanId === fetch?.spanContext().spanId);
    expect(issuerServer).toBeDefined();
    for (const span of [callerClient, greeterServer, verify, fetch, issuerServer])
      expect(span?.spanContext().traceId).toBe(callerSpan.spanContext().traceId);
  });
});
