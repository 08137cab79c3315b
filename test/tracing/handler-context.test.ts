/**
 * A traced server runs each call's handler, and the interceptors after the tracing one,
 * inside the call's SERVER span context: `trace.getActiveSpan()` there is the call's span,
 * the spans a handler starts are its children, and the calls it makes carry it as their
 * parent, so a protected service that calls its issuer makes one trace across three
 * processes' worth of spans, on either transport.
 */
import { credentials, Client, Metadata } from '@grpc/grpc-js';
import {
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  TraceFlags,
  type Tracer,
  type TracerProvider as TracerProviderApi,
  context,
  propagation,
  trace,
} from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ANY_AUDIENCE,
  type CallInterceptor,
  CallMetadata,
  type JwtClient,
  createJwtClient,
  createJwtServer,
  createRemoteVerifier,
  jwtAuthInterceptor,
  silentLogger,
} from '../../src/lib/index.js';
import { ClientPool } from '../../bench/kit/grpc-clients.js';
import { TRANSPORTS, closeAllServers, sharedKeys, startServer, trackServer } from '../../bench/kit/jwt-servers.js';
import { useGlobalTracing } from './global-sdk.js';
import { waitUntil } from '../../bench/kit/wait.js';

const { exporter, provider } = useGlobalTracing();

const bytes = (b: Buffer): Buffer => b;
/** A one-method service of raw bytes, as a user adds beside JwtService. */
const GREETER = {
  SayHello: {
    path: '/demo.Greeter/SayHello',
    requestStream: false,
    responseStream: false,
    requestDeserialize: bytes,
    responseSerialize: bytes,
    requestSerialize: bytes,
    responseDeserialize: bytes,
  },
};

/** Waits until `count` finished spans match `match` (servers end their spans after the client has its answer). */
async function spansWhere(match: (span: ReadableSpan) => boolean, count = 1): Promise<ReadableSpan[]> {
  await waitUntil(() => exporter.getFinishedSpans().filter(match).length >= count, 2000, 10);
  return exporter.getFinishedSpans().filter(match);
}

const named = (name: string, kind: SpanKind) => (span: ReadableSpan) => span.name === name && span.kind === kind;
const childOf = (parent: ReadableSpan | Span | undefined) => (span: ReadableSpan) =>
  parent !== undefined && span.parentSpanContext?.spanId === parent.spanContext().spanId;

describe.each(TRANSPORTS)('handlers in the server span context, transport %s', (transport) => {
  const clients = new ClientPool();
  afterAll(async () => {
    clients.closeAll();
    await closeAllServers();
  });

  it('streaming handlers too: a client-streaming one (started before its requests) and a server-streaming one', async () => {
    const server = trackServer(createJwtServer({ transport, logger: silentLogger, tracing: provider, health: false, reflection: false }));
    const active = new Map<string, string | undefined>();
    const streaming = (name: string, requestStream: boolean, responseStream: boolean) => ({
      path: `/demo.Streams/${name}`,
      requestStream,
      responseStream,
      requestDeserialize: bytes,
      responseSerialize: bytes,
      requestSerialize: bytes,
      responseDeserialize: bytes,
    });
    server.addService(
      { Upload: streaming('Upload', true, false), Download: streaming('Download', false, true) },
      {
        Upload: async (requests: AsyncIterable<Buffer>) => {
          for await (const _ of requests) active.set('Upload', trace.getActiveSpan()?.spanContext().spanId);
          return Buffer.alloc(0);
        },
        Download: async (_request: Buffer, responses: { write(message: Buffer): Promise<void> }) => {
          await responses.write(Buffer.from('one'));
          active.set('Download', trace.getActiveSpan()?.spanContext().spanId);
        },
      },
    );
    const port = await server.listen('127.0.0.1:0');
    const raw = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
    await new Promise<void>((resolve, reject) => {
      const upload = raw.makeClientStreamRequest('/demo.Streams/Upload', bytes, bytes, (err) => (err ? reject(err) : resolve()));
      upload.write(Buffer.from('a'));
      upload.end();
    });
    await new Promise<void>((resolve, reject) => {
      const download = raw.makeServerStreamRequest('/demo.Streams/Download', bytes, bytes, Buffer.alloc(0));
      download
        .on('data', () => undefined)
        .on('error', reject)
        .on('end', resolve);
    });
    raw.close();
    for (const name of ['Upload', 'Download']) {
      const [span] = await spansWhere(named(`demo.Streams/${name}`, SpanKind.SERVER));
      expect({ name, active: active.get(name) }).toEqual({ name, active: span?.spanContext().spanId });
    }
  });

  it('caller -> greeter (jwt.verify -> issuer GetJwks; user span; GenerateJwt -> issuer), one trace', async () => {
    const keys = await sharedKeys();
    const issuerPort = (await startServer({ transport, keys, subjects: ['ada@example.com'], tracing: provider })).port;
    const issuer: JwtClient = clients.track(createJwtClient(`127.0.0.1:${issuerPort}`));
    const { jwt: token } = await issuer.generateJwt({ algorithm: 'ES256' });

    // What the handler and a user interceptor after the tracing one see as the active span.
    const seen: { interceptor?: string; handler?: string } = {};
    const userInterceptor: CallInterceptor = {
      onCallStart: (call) => {
        if (call.method === GREETER.SayHello.path) seen.interceptor = trace.getActiveSpan()?.spanContext().spanId;
      },
    };
    const greeter = trackServer(
      createJwtServer({
        transport,
        keys,
        logger: silentLogger,
        tracing: provider,
        health: false,
        reflection: false,
        interceptors: [jwtAuthInterceptor(createRemoteVerifier(issuer, { audience: ANY_AUDIENCE })), userInterceptor],
      }),
    );
    greeter.addService(GREETER, {
      SayHello: async (name: Buffer) => {
        seen.handler = trace.getActiveSpan()?.spanContext().spanId;
        // A user's span, from the global API, and a call to another server after an await.
        trace.getTracer('user').startSpan('greeter.work').end();
        await new Promise((resolve) => setImmediate(resolve));
        await issuer.generateJwt({ algorithm: 'HS256' });
        return Buffer.from(`hello ${name.toString()}`);
      },
    });
    const greeterPort = await greeter.listen('127.0.0.1:0');
    exporter.reset();

    const raw = new Client(`127.0.0.1:${greeterPort}`, credentials.createInsecure());
    await trace.getTracer('test').startActiveSpan('caller', async (span) => {
      const metadata = new Metadata();
      metadata.set('authorization', `Bearer ${token}`);
      propagation.inject(context.active(), metadata, { set: (carrier, key, value) => carrier.set(key, value) });
      const answer = await new Promise<Buffer>((resolve, reject) =>
        raw.makeUnaryRequest(GREETER.SayHello.path, bytes, bytes, Buffer.from('ada'), metadata, (err, res) =>
          err ? reject(err) : resolve(res as Buffer),
        ),
      );
      expect(answer.toString()).toBe('hello ada');
      span.end();
    });
    raw.close();

    const [caller] = await spansWhere(named('caller', SpanKind.INTERNAL));
    const [greeterSpan] = await spansWhere((s) => named('demo.Greeter/SayHello', SpanKind.SERVER)(s) && childOf(caller)(s));
    expect(greeterSpan).toBeDefined();
    // The handler and the interceptor after tracing saw the call's span as active.
    expect(seen.handler).toBe(greeterSpan?.spanContext().spanId);
    expect(seen.interceptor).toBe(greeterSpan?.spanContext().spanId);
    // The user's span and the outgoing call are children of the call's span.
    const [work] = await spansWhere((s) => s.name === 'greeter.work' && childOf(greeterSpan)(s));
    const [sign] = await spansWhere((s) => named('jwt.services.JwtService/GenerateJwt', SpanKind.CLIENT)(s) && childOf(greeterSpan)(s));
    const [issuerSign] = await spansWhere((s) => named('jwt.services.JwtService/GenerateJwt', SpanKind.SERVER)(s) && childOf(sign)(s));
    const [jwtSign] = await spansWhere((s) => s.name === 'jwt.sign' && childOf(issuerSign)(s));
    // The protected-service chain: jwt.verify under the call's span, its JWK Set fetch under it.
    const [verify] = await spansWhere((s) => s.name === 'jwt.verify' && childOf(greeterSpan)(s));
    const [fetch] = await spansWhere((s) => named('jwt.services.JwtService/GetJwks', SpanKind.CLIENT)(s) && childOf(verify)(s));
    const [issuerJwks] = await spansWhere((s) => named('jwt.services.JwtService/GetJwks', SpanKind.SERVER)(s) && childOf(fetch)(s));
    const chain = { greeterSpan, work, sign, issuerSign, jwtSign, verify, fetch, issuerJwks };
    for (const [name, span] of Object.entries(chain))
      expect({ name, traceId: span?.spanContext().traceId }).toEqual({ name, traceId: caller?.spanContext().traceId });
  });
});

/** `provider`, writing down the name of every span a tracer of it is asked to start (recording or not). */
function countingProvider(started: string[]): TracerProviderApi {
  return {
    getTracer(name, version, options) {
      const tracer = provider.getTracer(name, version, options);
      return {
        startSpan: (spanName, spanOptions, parent) => {
          started.push(spanName);
          return tracer.startSpan(spanName, spanOptions, parent);
        },
        startActiveSpan: tracer.startActiveSpan.bind(tracer),
      } as Tracer;
    },
  };
}

describe.each(TRANSPORTS)('a call the sampler drops, transport %s', (transport) => {
  const clients = new ClientPool();
  afterAll(async () => {
    clients.closeAll();
    await closeAllServers();
  });

  it("starts no jwt.sign or jwt.verify, and the handler's span still carries the trace to the calls it makes", async () => {
    const keys = await sharedKeys();
    // The issuer writes down the traceparent of every call it gets (the greeter's JWK Set fetch and GenerateJwt).
    const received: string[] = [];
    const recordTraceparent: CallInterceptor = {
      onCallStart: (call) => {
        received.push(`${call.method} ${String(call.metadata.get('traceparent'))}`);
      },
    };
    const issuerPort = (await startServer({ transport, keys, subjects: ['ada@example.com'], interceptors: [recordTraceparent] })).port;
    const issuer: JwtClient = clients.track(createJwtClient(`127.0.0.1:${issuerPort}`));
    const { jwt: token } = await issuer.generateJwt({ algorithm: 'ES256' });
    received.length = 0;

    const started: string[] = [];
    let active: { traceId?: string; recording?: boolean } = {};
    const greeter = trackServer(
      createJwtServer({
        transport,
        keys,
        subjects: ['ada@example.com'],
        logger: silentLogger,
        tracing: countingProvider(started),
        health: false,
        reflection: false,
        interceptors: [jwtAuthInterceptor(createRemoteVerifier(issuer, { audience: ANY_AUDIENCE }))],
      }),
    );
    greeter.addService(GREETER, {
      SayHello: async () => {
        const span = trace.getActiveSpan();
        active = { traceId: span?.spanContext().traceId, recording: span?.isRecording() };
        await issuer.generateJwt({ algorithm: 'HS256' });
        return Buffer.alloc(0);
      },
    });
    const greeterPort = await greeter.listen('127.0.0.1:0');

    // The caller's span was not sampled (flags 00): the default sampler, parent-based, drops the call.
    const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${token}`);
    metadata.set('traceparent', `00-${TRACE_ID}-00f067aa0ba902b7-00`);
    const raw = new Client(`127.0.0.1:${greeterPort}`, credentials.createInsecure());
    await new Promise((resolve, reject) =>
      raw.makeUnaryRequest(GREETER.SayHello.path, bytes, bytes, Buffer.alloc(0), metadata, (e, r) => (e ? reject(e) : resolve(r))),
    );
    raw.close();
    // GenerateJwt from the package client, whose CLIENT span is the child of an unsampled caller's span.
    const caller = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: TRACE_ID,
      spanId: '00f067aa0ba902b7',
      traceFlags: TraceFlags.NONE,
      isRemote: true,
    });
    const authorization = new CallMetadata().set('authorization', `Bearer ${token}`);
    await context.with(caller, () => clients.jwt(greeterPort).generateJwt({ algorithm: 'HS256' }, { metadata: authorization }));

    // Only the server spans and the outgoing calls' CLIENT spans were started: no children of a span that does not record.
    expect(started.filter((name) => name === 'jwt.sign' || name === 'jwt.verify')).toEqual([]);
    expect(started).toContain('demo.Greeter/SayHello');
    expect(started).toContain('jwt.services.JwtService/GenerateJwt');
    expect(active).toEqual({ traceId: TRACE_ID, recording: false });
    // The JWK Set fetch (jwtAuthInterceptor's verifier) and the handler's call carried the trace, unsampled.
    const carried = new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-00$`);
    expect(received.map((line) => line.split(' ')[0])).toEqual([
      '/jwt.services.JwtService/GetJwks',
      '/jwt.services.JwtService/GenerateJwt',
    ]);
    for (const line of received) expect(line.split(' ')[1]).toMatch(carried);
    expect(exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === TRACE_ID)).toEqual([]);
  });
});
