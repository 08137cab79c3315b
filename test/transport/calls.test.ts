/**
 * Calls through a grpc-js client, on both transports serving the same implementation:
 * jwt-grpc's own server and a grpc-js Server through the adapter. What a handler
 * sees and what the client gets must be the same on both.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Client,
  type ClientReadableStream,
  type ServiceError,
  Metadata as GrpcMetadata,
  credentials,
  loadPackageDefinition,
  makeGenericClientConstructor,
  status as grpcStatus,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CallContext,
  CallKey,
  type CallOutcome,
  GrpcStatusError,
  type CallInterceptor,
  type ServiceImplementation,
  GrpcStatus,
} from '../../src/contracts/handler-api.js';
import { PROBE } from './helpers/probe.js';
import { type Services, closeAllServers, startGrpcJs, startHttp2 } from './helpers/servers.js';
import { recordingLogger } from '../../bench/kit/jwt-servers.js';
import { TEST_LOADER_OPTIONS, TEST_PROTO, servedTestService, testServiceImplementation } from './helpers/test-service.js';
import { DEFAULT_DEADLINE_MS, unary } from '../../bench/kit/grpc-clients.js';

type TestClient = Client & Record<string, (...args: unknown[]) => unknown>;

const testPackage = loadPackageDefinition(loadSync(TEST_PROTO, TEST_LOADER_OPTIONS)) as unknown as {
  grpc: {
    testing: { TestService: new (address: string, creds: ReturnType<typeof credentials.createInsecure>, options?: object) => TestClient };
  };
};

async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (err) {
    return err as ServiceError;
  }
  throw new Error('expected the call to fail');
}

/** Records what interceptors and handlers see. */
const CLAIMS = new CallKey<{ sub: string }>('claims');
const outcomes: { method: string; outcome: CallOutcome }[] = [];
const started: string[] = [];
const authInterceptor: CallInterceptor = {
  async onCallStart(call) {
    const token = call.metadata.get('authorization');
    await sleep(1); // An auth check that awaits (a key fetch, a cache).
    if (token === 'Bearer bad') throw new GrpcStatusError(GrpcStatus.UNAUTHENTICATED, 'bad token');
    if (typeof token === 'string') call.set(CLAIMS, { sub: token.slice('Bearer '.length) });
  },
};
const metricsInterceptor: CallInterceptor = {
  onCallStart: (call) => void started.push(call.method),
  onCallEnd: (call, outcome) => void outcomes.push({ method: call.method, outcome }),
};

/** Probe handlers: what a test needs to watch on the server side. */
const probeSeen: { signal?: AbortSignal; claims?: { sub: string } | undefined; ended?: Promise<unknown> } = {};
const probe: ServiceImplementation = {
  async Unary(request: { op: string; ms?: number }, call: CallContext) {
    probeSeen.claims = call.get(CLAIMS);
    probeSeen.signal = call.signal;
    switch (request.op) {
      case 'wait':
        await new Promise((resolve) => call.signal.addEventListener('abort', resolve, { once: true }));
        return { aborted: call.signal.aborted };
      case 'throw':
        throw new TypeError('secret internals');
      case 'claims':
        return { claims: call.get(CLAIMS) ?? null };
      default:
        return request;
    }
  },
  async ServerStream(request: { count: number }, responses: { write(m: unknown): Promise<void> }, call: CallContext) {
    probeSeen.signal = call.signal;
    for (let i = 0; i < request.count; i++) await responses.write({ i, pad: 'x'.repeat(1000) });
  },
  ClientStream: async (requests: AsyncIterable<unknown>) => {
    const all: unknown[] = [];
    for await (const request of requests) all.push(request);
    return { all };
  },
  Bidi: async (requests: AsyncIterable<unknown>, responses: { write(m: unknown): Promise<void> }) => {
    for await (const request of requests) await responses.write(request);
  },
};

const ProbeClient = makeGenericClientConstructor(
  Object.fromEntries(Object.entries(PROBE).map(([name, m]) => [name, { ...m, originalName: name }])) as never,
  'Probe',
);
/** Sends bytes that are not JSON: the deserializer refuses them. */
const BrokenProbeClient = makeGenericClientConstructor(
  { Unary: { ...PROBE.Unary, requestSerialize: () => Buffer.from('{not json'), originalName: 'Unary' } } as never,
  'Probe',
);

const services: Services = [
  [servedTestService(), testServiceImplementation()],
  [PROBE, probe],
];
const interceptors = [metricsInterceptor, authInterceptor];

describe.each([
  ['own HTTP/2', () => startHttp2(services, { interceptors, maxReceiveMessageBytes: 4 << 20 })],
  ['grpc-js adapter', () => startGrpcJs(services, { interceptors, channelOptions: { 'grpc.max_receive_message_length': 4 << 20 } })],
] as const)('%s', (_transport, start) => {
  let port: number;
  let client: TestClient;
  let probeClient: TestClient;

  beforeAll(async () => {
    ({ port } = await start());
    client = new testPackage.grpc.testing.TestService(`127.0.0.1:${port}`, credentials.createInsecure(), {
      'grpc.max_receive_message_length': 8 << 20,
    });
    probeClient = new ProbeClient(`127.0.0.1:${port}`, credentials.createInsecure()) as unknown as TestClient;
  });

  afterAll(() => {
    client.close();
    probeClient.close();
  });

  it('serves unary calls, large ones included', async () => {
    expect(await unary(client, 'EmptyCall', {})).toEqual({});
    const res = await unary<{ payload: { body: Buffer } }>(client, 'UnaryCall', {
      response_size: 314_159,
      payload: { body: Buffer.alloc(271_828) },
    });
    expect(res.payload.body.length).toBe(314_159);
  });

  it('serves server-streaming, client-streaming and bidi calls', async () => {
    const stream = client.StreamingOutputCall?.({
      response_parameters: [{ size: 31_415 }, { size: 9 }, { size: 2653 }, { size: 58_979 }],
    }) as ClientReadableStream<{
      payload: { body: Buffer };
    }>;
    const sizes: number[] = [];
    for await (const message of stream) sizes.push(message.payload.body.length);
    expect(sizes).toEqual([31_415, 9, 2653, 58_979]);

    const aggregate = await new Promise<{ aggregated_payload_size: number }>((resolve, reject) => {
      const upload = client.StreamingInputCall?.((err: ServiceError | null, res: { aggregated_payload_size: number }) =>
        err ? reject(err) : resolve(res),
      ) as {
        write(m: unknown): void;
        end(): void;
      };
      for (const size of [27_182, 8, 1828, 45_904]) upload.write({ payload: { body: Buffer.alloc(size) } });
      upload.end();
    });
    expect(aggregate.aggregated_payload_size).toBe(74_922);

    const duplex = client.FullDuplexCall?.() as NodeJS.ReadWriteStream & { write(m: unknown): boolean; end(): void };
    const received: number[] = [];
    const done = new Promise<void>((resolve, reject) => {
      duplex.on('data', (m: { payload: { body: Buffer } }) => received.push(m.payload.body.length));
      duplex.on('end', resolve);
      duplex.on('error', reject);
    });
    for (const size of [31_415, 9, 2653]) duplex.write({ response_parameters: [{ size }], payload: { body: Buffer.alloc(10) } });
    duplex.end();
    await done;
    expect(received).toEqual([31_415, 9, 2653]);
  });

  it('returns a status and a message with unicode and newlines intact', async () => {
    const message = '\t\ntest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈\t\n';
    const err = await failure(unary(client, 'UnaryCall', { response_status: { code: 2, message } }));
    expect(err.code).toBe(grpcStatus.UNKNOWN);
    expect(err.details).toBe(message);
  });

  it('echoes custom metadata: initial in the headers, -bin in the trailers', async () => {
    const metadata = new GrpcMetadata();
    metadata.set('x-grpc-test-echo-initial', 'test_initial_metadata_value');
    metadata.set('x-grpc-test-echo-trailing-bin', Buffer.from([0x0a, 0x0b, 0x0a, 0x0b, 0x0a, 0x0b]));
    const { headers, trailers } = await new Promise<{ headers: GrpcMetadata; trailers: GrpcMetadata }>((resolve, reject) => {
      let headers: GrpcMetadata | undefined;
      const call = client.UnaryCall?.({ response_size: 1 }, metadata, (err: ServiceError | null) => {
        if (err) reject(err);
      }) as NodeJS.EventEmitter;
      call.on('metadata', (received: GrpcMetadata) => {
        headers = received;
      });
      call.on('status', (st: { metadata: GrpcMetadata }) => resolve({ headers: headers ?? new GrpcMetadata(), trailers: st.metadata }));
    });
    expect(headers.get('x-grpc-test-echo-initial')).toEqual(['test_initial_metadata_value']);
    expect(trailers.get('x-grpc-test-echo-trailing-bin')).toEqual([Buffer.from([0x0a, 0x0b, 0x0a, 0x0b, 0x0a, 0x0b])]);
  });

  it("answers a request that does not deserialize with the deserializer's INVALID_ARGUMENT", async () => {
    const broken = new BrokenProbeClient(`127.0.0.1:${port}`, credentials.createInsecure()) as unknown as TestClient;
    try {
      const err = await failure(unary(broken, 'Unary', { op: 'echo' }));
      expect(err.code).toBe(grpcStatus.INVALID_ARGUMENT);
      expect(err.details).toBe('request is not JSON (9 bytes)');
    } finally {
      broken.close();
    }
  });

  it("answers a handler's plain Error with INTERNAL and a generic message; other calls are unaffected", async () => {
    const [bad, good] = await Promise.allSettled([
      unary(probeClient, 'Unary', { op: 'throw' }),
      unary(probeClient, 'Unary', { op: 'echo', n: 1 }),
    ]);
    expect(bad.status === 'rejected' && (bad.reason as ServiceError).code).toBe(grpcStatus.INTERNAL);
    expect(bad.status === 'rejected' && (bad.reason as ServiceError).details).toBe('/test.Probe/Unary: internal error');
    expect(good).toEqual({ status: 'fulfilled', value: { op: 'echo', n: 1 } });
  });

  it("ends a call past its deadline with DEADLINE_EXCEEDED and aborts the handler's signal", async () => {
    const err = await failure(unary(probeClient, 'Unary', { op: 'wait' }, 200));
    expect(err.code).toBe(grpcStatus.DEADLINE_EXCEEDED);
    await sleep(50);
    expect(probeSeen.signal?.aborted).toBe(true);
  });

  it('on client cancellation aborts the signal, tells the interceptors CANCELLED and keeps no timer', async () => {
    const timersBefore = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    outcomes.length = 0;
    const call = probeClient.Unary?.({ op: 'wait' }, new GrpcMetadata(), { deadline: Date.now() + 60_000 }, () => {}) as { cancel(): void };
    await sleep(100);
    const signal = probeSeen.signal;
    expect(signal?.aborted).toBe(false);
    call.cancel();
    await sleep(100);
    expect(signal?.aborted).toBe(true);
    expect(outcomes.filter((o) => o.method === '/test.Probe/Unary').map((o) => o.outcome.status)).toEqual([GrpcStatus.CANCELLED]);
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBeLessThanOrEqual(timersBefore);
    // The connection serves on.
    expect(await unary(probeClient, 'Unary', { op: 'echo' })).toEqual({ op: 'echo' });
  });

  it("cancels a server stream the client abandons: the handler's writes stop", async () => {
    const stream = probeClient.ServerStream?.({ count: 100_000 }) as ClientReadableStream<unknown> & { cancel(): void };
    await new Promise((resolve) => stream.once('data', resolve));
    stream.on('error', () => {});
    stream.cancel();
    await sleep(100);
    expect(probeSeen.signal?.aborted).toBe(true);
  });

  it('decompresses requests a client sends gzip-compressed', async () => {
    const gzipClient = new testPackage.grpc.testing.TestService(`127.0.0.1:${port}`, credentials.createInsecure(), {
      'grpc.default_compression_algorithm': 2,
    });
    try {
      const res = await unary<{ payload: { body: Buffer } }>(gzipClient, 'UnaryCall', {
        response_size: 10,
        payload: { body: Buffer.alloc(100_000) },
      });
      expect(res.payload.body.length).toBe(10);
    } finally {
      gzipClient.close();
    }
  });

  it('interceptors: refuse a call before its handler, hand claims to it, count every call by method and status', async () => {
    started.length = 0;
    outcomes.length = 0;
    const bad = new GrpcMetadata();
    bad.set('authorization', 'Bearer bad');
    const refused = await failure(unary(probeClient, 'Unary', { op: 'claims' }, DEFAULT_DEADLINE_MS, bad));
    expect(refused.code).toBe(grpcStatus.UNAUTHENTICATED);
    expect(refused.details).toBe('bad token');
    const good = new GrpcMetadata();
    good.set('authorization', 'Bearer ada');
    expect(await unary(probeClient, 'Unary', { op: 'claims' }, DEFAULT_DEADLINE_MS, good)).toEqual({ claims: { sub: 'ada' } });
    expect(started).toEqual(['/test.Probe/Unary', '/test.Probe/Unary']);
    expect(outcomes.map((o) => [o.method, o.outcome.status])).toEqual([
      ['/test.Probe/Unary', GrpcStatus.UNAUTHENTICATED],
      ['/test.Probe/Unary', GrpcStatus.OK],
    ]);
    for (const { outcome } of outcomes) expect(outcome.durationMs).toBeGreaterThan(0);
  });
});

describe('the own transport only', () => {
  let port: number;
  let client: TestClient;
  const logger = recordingLogger();

  beforeAll(async () => {
    ({ port } = await startHttp2(services, { logger }));
    client = new testPackage.grpc.testing.TestService(`127.0.0.1:${port}`, credentials.createInsecure());
  });

  afterAll(() => client.close());

  it('serves 3,000 concurrent unary calls on one connection, all OK', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 3000 }, (_, i) => unary<{ payload: { body: Buffer } }>(client, 'UnaryCall', { response_size: i % 100 }, 30_000)),
    );
    const failed = results.filter((r) => r.status === 'rejected');
    expect(failed.map((r) => (r as PromiseRejectedResult).reason.message).slice(0, 3)).toEqual([]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3000);
  });

  it('sends gzip-compressed responses the grpc-js client decompresses', async () => {
    const res = await unary<{ payload: { body: Buffer } }>(client, 'UnaryCall', {
      response_size: 50_000,
      response_compressed: { value: true },
    });
    expect(res.payload.body).toEqual(Buffer.alloc(50_000));
  });

  it('refuses a request whose metadata exceeds maxHeaderListBytes (16 KiB), and goes on serving', async () => {
    const big = new GrpcMetadata();
    big.set('x-big', 'v'.repeat(20_000));
    const err = await failure(unary(client, 'EmptyCall', {}, DEFAULT_DEADLINE_MS, big));
    // The server resets the stream with ENHANCE_YOUR_CALM, which grpc-js reports as RESOURCE_EXHAUSTED.
    expect(err.code).toBe(grpcStatus.RESOURCE_EXHAUSTED);
    expect(await unary(client, 'EmptyCall', {})).toEqual({});
  });

  it('a request over maxReceiveMessageBytes gets RESOURCE_EXHAUSTED and the next call works', async () => {
    const err = await failure(unary(client, 'UnaryCall', { response_size: 1, payload: { body: Buffer.alloc(100_000) } }));
    expect(err.code).toBe(grpcStatus.RESOURCE_EXHAUSTED);
    expect(err.details).toMatch(/exceeds the limit of 65536 bytes \(maxReceiveMessageBytes\)/);
    expect(await unary(client, 'EmptyCall', {})).toEqual({});
  });
});

afterAll(closeAllServers);
