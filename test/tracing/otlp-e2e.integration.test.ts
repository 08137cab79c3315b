/**
 * End to end with real OpenTelemetry pieces: `jwt-grpc serve --otel` exports over OTLP/HTTP
 * (the SDK's own exporter, configured by OTEL_* variables) to a sink on loopback, and the
 * caller is a grpc-js client instrumented with @opentelemetry/instrumentation-grpc in its own
 * process. The server's span must be the child of that client's span, in one trace. With
 * OTEL_EXPORTER_OTLP_PROTOCOL=grpc, the spans go to an OTLP/gRPC receiver instead: the
 * collector's TraceService, served with grpc-js from the OTLP .proto files in
 * fixtures/otlp-proto (https://github.com/open-telemetry/opentelemetry-proto at ac2c4b5,
 * v1.11.0 and after; Apache-2.0, the header of each file).
 */
import { randomBytes } from 'node:crypto';
import { Server as GrpcServer, ServerCredentials, type ServerUnaryCall, type sendUnaryData, loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll, runStep } from '../../bench/kit/launcher.js';
import { CallMetadata } from '../../src/lib/index.js';
import { ClientPool } from '../../bench/kit/grpc-clients.js';

const CLIENT = join(import.meta.dirname, 'fixtures', 'instrumented-client.cjs');

/** An OTLP/JSON attribute value (https://github.com/open-telemetry/opentelemetry-proto, JSON mapping). */
type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean };
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: AnyValue }[];
  status?: { code?: number };
}
interface ExportedSpan extends OtlpSpan {
  readonly resource: Record<string, unknown>;
}

/** The OTLP span kinds (opentelemetry-proto trace.proto). */
const KIND = { SERVER: 2, CLIENT: 3 } as const;

const plain = (value: AnyValue): unknown => value.stringValue ?? (value.intValue === undefined ? value.boolValue : Number(value.intValue));
const attributesOf = (list: { key: string; value: AnyValue }[]): Record<string, unknown> =>
  Object.fromEntries(list.map(({ key, value }) => [key, plain(value)]));

/** A minimal OTLP/HTTP receiver: keeps every span posted to /v1/traces, with its resource. */
class OtlpSink {
  readonly spans: ExportedSpan[] = [];
  /** Bodies posted as OTLP protobuf (kept undecoded: their arrival is what is checked). */
  readonly protobufBodies: Buffer[] = [];
  readonly #server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/v1/traces' && request.headers['content-type']?.startsWith('application/json')) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: { resource: { attributes: { key: string; value: AnyValue }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
        };
        for (const { resource, scopeSpans } of body.resourceSpans) {
          for (const { spans } of scopeSpans)
            for (const span of spans) this.spans.push({ ...span, resource: attributesOf(resource.attributes) });
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else if (request.url === '/v1/traces' && request.headers['content-type'] === 'application/x-protobuf') {
        this.protobufBodies.push(Buffer.concat(chunks));
        response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      } else {
        response.writeHead(415).end();
      }
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

describe('--otel end to end, OTLP/HTTP to a receiver on loopback', () => {
  const sink = new OtlpSink();
  let endpoint: string;

  beforeAll(async () => {
    endpoint = await sink.listen();
  });
  afterEach(async () => {
    sink.spans.length = 0;
    sink.protobufBodies.length = 0;
    await killAll();
  });
  afterAll(() => sink.close());

  it('in cluster mode (turned on by JWT_GRPC_OTEL=1), every worker exports its own spans, told apart by process.pid', async () => {
    const server = await startCli(serveArgs(), {
      env: { JWT_GRPC_OTEL: '1', NODEMAXPROCS: '2', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
    });
    expect(server.workerPids).toHaveLength(2);
    // node:cluster hands connections to workers round robin; each caller process is one connection.
    for (let i = 0; i < 4; i++) await runStep(process.execPath, [CLIENT, String(server.port), endpoint], { timeoutMs: 30_000 });
    expect((await server.stop()).code).toBe(0);
    const serverSpans = sink.spans.filter((span) => span.kind === KIND.SERVER);
    expect(serverSpans).toHaveLength(4);
    expect(new Set(serverSpans.map((span) => span.resource['process.pid']))).toEqual(new Set(server.workerPids));
    for (const span of serverSpans) expect(span.resource['service.name']).toBe('jwt-grpc');
  });

  it("by default speaks OTLP's default protocol, http/protobuf", async () => {
    const server = await startCli(serveArgs('--otel'), { env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } });
    const clients = new ClientPool();
    await clients.jwt(server.port).generateJwt({ algorithm: 'HS256', subject: 'ada@example.com' });
    clients.closeAll();
    expect((await server.stop()).code).toBe(0);
    expect(sink.protobufBodies.length).toBeGreaterThan(0);
    // The protobuf carries the span's name as a plain string field.
    expect(Buffer.concat(sink.protobufBodies).includes('jwt.services.JwtService/GenerateJwt')).toBe(true);
    expect(sink.spans).toEqual([]);
  });

  it('OTEL_TRACES_SAMPLER=always_off: calls are answered, no span is exported', async () => {
    const server = await startCli(serveArgs('--otel'), {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_TRACES_SAMPLER: 'always_off' },
    });
    await runStep(process.execPath, [CLIENT, String(server.port), endpoint], { timeoutMs: 30_000 });
    expect((await server.stop()).code).toBe(0);
    expect(sink.spans.map((span) => span.kind)).toEqual([KIND.CLIENT]); // the caller's own span only
  });

  it("the server span is the child of the instrumented grpc-js client's span, with jwt.sign under it", async () => {
    const server = await startCli(serveArgs('--otel'), {
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'jwt-grpc-e2e',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=e2e',
      },
    });
    const stdout = await runStep(process.execPath, [CLIENT, String(server.port), endpoint], { timeoutMs: 30_000 });
    const { kid } = JSON.parse(stdout) as { kid: string };
    // SIGTERM: the server drains and its batch processor flushes what it holds.
    expect((await server.stop()).code).toBe(0);

    const client = sink.spans.find((span) => span.kind === KIND.CLIENT);
    expect(client?.name).toBe('grpc.jwt.services.JwtService/GenerateJwt');
    expect(client?.resource['service.name']).toBe('e2e-caller');

    const serverSpan = sink.spans.find((span) => span.kind === KIND.SERVER && span.name === 'jwt.services.JwtService/GenerateJwt');
    expect(serverSpan?.traceId).toBe(client?.traceId);
    expect(serverSpan?.parentSpanId).toBe(client?.spanId);
    expect(attributesOf(serverSpan?.attributes ?? [])).toMatchObject({
      'rpc.system': 'grpc',
      'rpc.service': 'jwt.services.JwtService',
      'rpc.method': 'GenerateJwt',
      'rpc.grpc.status_code': 0,
      'network.peer.address': '127.0.0.1',
    });
    expect(serverSpan?.status?.code ?? 0).toBe(0); // UNSET
    expect(serverSpan?.resource).toMatchObject({
      'service.name': 'jwt-grpc-e2e',
      'deployment.environment.name': 'e2e',
      'process.pid': server.pid,
    });

    const sign = sink.spans.find((span) => span.name === 'jwt.sign');
    expect(sign?.traceId).toBe(client?.traceId);
    expect(sign?.parentSpanId).toBe(serverSpan?.spanId);
    expect(attributesOf(sign?.attributes ?? [])).toEqual({ 'jwt.alg': 'HS256', 'jwt.kid': kid });
  });
});

/** A span as @grpc/proto-loader decodes OTLP's protobuf (bytes as Buffers, enums as numbers, 64-bit integers as strings). */
interface GrpcOtlpSpan {
  traceId: Buffer;
  spanId: Buffer;
  parentSpanId: Buffer;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: string; boolValue?: boolean; value?: string } }[];
}

/** A minimal OTLP/gRPC receiver: opentelemetry.proto.collector.trace.v1.TraceService/Export, keeping every span with its resource. */
class OtlpGrpcReceiver {
  readonly spans: (GrpcOtlpSpan & { resource: Record<string, unknown> })[] = [];
  readonly #server = new GrpcServer();

  async listen(): Promise<string> {
    const definition = loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto', {
      includeDirs: [join(import.meta.dirname, 'fixtures', 'otlp-proto')],
      longs: String,
      enums: Number,
      bytes: Buffer,
      defaults: true,
      oneofs: true,
    });
    const collector = loadPackageDefinition(definition) as unknown as {
      opentelemetry: { proto: { collector: { trace: { v1: { TraceService: { service: Parameters<GrpcServer['addService']>[0] } } } } } };
    };
    type Request = { resourceSpans: { resource: { attributes: GrpcOtlpSpan['attributes'] }; scopeSpans: { spans: GrpcOtlpSpan[] }[] }[] };
    this.#server.addService(collector.opentelemetry.proto.collector.trace.v1.TraceService.service, {
      Export: (call: ServerUnaryCall<Request, unknown>, callback: sendUnaryData<unknown>) => {
        for (const { resource, scopeSpans } of call.request.resourceSpans) {
          const resourceAttributes = Object.fromEntries(
            resource.attributes.map(({ key, value }) => [key, value.stringValue ?? value.intValue]),
          );
          for (const { spans } of scopeSpans) for (const span of spans) this.spans.push({ ...span, resource: resourceAttributes });
        }
        callback(null, {});
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      this.#server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
    );
    return `http://127.0.0.1:${port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.tryShutdown(() => resolve()));
  }
}

describe('--otel end to end, OTEL_EXPORTER_OTLP_PROTOCOL=grpc to an OTLP/gRPC receiver on loopback', () => {
  const receiver = new OtlpGrpcReceiver();
  let endpoint: string;

  beforeAll(async () => {
    endpoint = await receiver.listen();
  });
  afterEach(() => killAll());
  afterAll(() => receiver.close());

  it("the server span arrives with the caller's trace id, its name, kind and attributes, and jwt.sign under it", async () => {
    const server = await startCli(serveArgs('--otel'), {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_SERVICE_NAME: 'jwt-grpc-over-grpc' },
    });
    const traceId = randomBytes(16).toString('hex');
    const parentSpanId = randomBytes(8).toString('hex');
    const clients = new ClientPool();
    const metadata = new CallMetadata().set('traceparent', `00-${traceId}-${parentSpanId}-01`);
    await clients.jwt(server.port).generateJwt({ algorithm: 'HS256', subject: 'ada@example.com' }, { metadata });
    clients.closeAll();
    // SIGTERM: the server drains and its batch processor flushes over gRPC.
    expect((await server.stop()).code, server.stderr).toBe(0);

    const serverSpan = receiver.spans.find((span) => span.name === 'jwt.services.JwtService/GenerateJwt');
    expect(serverSpan?.traceId.toString('hex')).toBe(traceId);
    expect(serverSpan?.parentSpanId.toString('hex')).toBe(parentSpanId);
    expect(serverSpan?.kind).toBe(KIND.SERVER);
    const attributes = Object.fromEntries(
      (serverSpan?.attributes ?? []).map(({ key, value }) => [key, value.stringValue ?? value.intValue]),
    );
    expect(attributes).toMatchObject({
      'rpc.system': 'grpc',
      'rpc.service': 'jwt.services.JwtService',
      'rpc.method': 'GenerateJwt',
      'rpc.grpc.status_code': '0',
      'network.peer.address': '127.0.0.1',
    });
    expect(serverSpan?.resource).toMatchObject({ 'service.name': 'jwt-grpc-over-grpc', 'process.pid': String(server.pid) });
    const sign = receiver.spans.find((span) => span.name === 'jwt.sign');
    expect(sign?.traceId.toString('hex')).toBe(traceId);
    expect(sign?.parentSpanId.toString('hex')).toBe(serverSpan?.spanId.toString('hex'));
  });
});
