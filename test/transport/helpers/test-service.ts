/**
 * grpc.testing.TestService, the gRPC project's interoperability test service, implemented
 * on jwt-grpc's transport contract as the interop test descriptions
 * (doc/interop-test-descriptions.md of the gRPC project) ask of a server: payloads of the
 * requested sizes, a requested status echoed, `x-grpc-test-echo-initial` echoed in the
 * response headers and `x-grpc-test-echo-trailing-bin` in the trailers, responses gzip
 * compressed when asked. Codecs are @grpc/proto-loader's. UnimplementedCall is left out.
 */
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { loadSync } from '@grpc/proto-loader';
import {
  type CallContext,
  GrpcStatusError,
  CallMetadata,
  type ResponseStream,
  type ServiceDescriptor,
  type ServiceImplementation,
  GrpcStatus,
  type StatusCode,
} from '../../../src/contracts/handler-api.js';

export const FIXTURES_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
export const TEST_PROTO = join(FIXTURES_DIR, 'grpc', 'testing', 'test.proto');
export const TEST_LOADER_OPTIONS = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [FIXTURES_DIR],
};

const ECHO_INITIAL = 'x-grpc-test-echo-initial';
const ECHO_TRAILING = 'x-grpc-test-echo-trailing-bin';

interface Payload {
  body: Buffer;
}
interface EchoStatus {
  code: number;
  message: string;
}
interface SimpleRequest {
  response_size: number;
  payload: Payload | null;
  response_compressed: { value: boolean } | null;
  response_status: EchoStatus | null;
  fill_server_id: boolean;
}
interface ResponseParameters {
  size: number;
  interval_us: number;
  compressed: { value: boolean } | null;
}
interface StreamingOutputCallRequest {
  response_parameters: ResponseParameters[];
  payload: Payload | null;
  response_status: EchoStatus | null;
}
interface StreamingInputCallRequest {
  payload: Payload | null;
}

export const SERVER_ID = 'jwt-grpc-transport-test';

let loaded: ServiceDescriptor | undefined;

/** TestService as served (proto-loader's codecs): every method but UnimplementedCall. */
export function servedTestService(): ServiceDescriptor {
  if (loaded === undefined) {
    const { UnimplementedCall: _, ...served } = loadSync(TEST_PROTO, TEST_LOADER_OPTIONS)[
      'grpc.testing.TestService'
    ] as unknown as ServiceDescriptor;
    loaded = served;
  }
  return loaded;
}

function echoMetadata(call: CallContext): void {
  const initial = call.metadata.get(ECHO_INITIAL);
  if (initial !== undefined) call.sendMetadata(new CallMetadata().set(ECHO_INITIAL, initial));
  const trailing = call.metadata.get(ECHO_TRAILING);
  if (trailing !== undefined) call.setTrailers(new CallMetadata().set(ECHO_TRAILING, trailing));
}

function checkStatus(status: EchoStatus | null): void {
  if (status !== null && status.code !== 0) throw new GrpcStatusError(status.code as StatusCode, status.message);
}

function payload(size: number): { payload: { body: Buffer } } {
  if (size < 0) throw new GrpcStatusError(GrpcStatus.INVALID_ARGUMENT, `negative response size ${size}`);
  return { payload: { body: Buffer.alloc(size) } };
}

async function writeResponses(
  parameters: readonly ResponseParameters[],
  responses: ResponseStream<unknown>,
  call: CallContext,
): Promise<void> {
  const anyCompressed = parameters.some((p) => p.compressed?.value === true);
  if (anyCompressed) call.setResponseCompression('gzip');
  for (const parameter of parameters) {
    if (parameter.interval_us > 0) await sleep(parameter.interval_us / 1000, undefined, { signal: call.signal });
    if (anyCompressed) call.setResponseCompression(parameter.compressed?.value === true ? 'gzip' : 'identity');
    await responses.write(payload(parameter.size));
  }
}

/** The handlers of {@link servedTestService}. */
export function testServiceImplementation(): ServiceImplementation {
  const unary = (request: SimpleRequest, call: CallContext) => {
    echoMetadata(call);
    checkStatus(request.response_status);
    if (request.response_compressed?.value === true) call.setResponseCompression('gzip');
    return { ...payload(request.response_size), ...(request.fill_server_id && { server_id: SERVER_ID }) };
  };
  return {
    EmptyCall: () => ({}),
    UnaryCall: unary,
    CacheableUnaryCall: unary,
    async StreamingOutputCall(request: StreamingOutputCallRequest, responses: ResponseStream<unknown>, call: CallContext) {
      echoMetadata(call);
      await writeResponses(request.response_parameters, responses, call);
      checkStatus(request.response_status);
    },
    async StreamingInputCall(requests: AsyncIterable<StreamingInputCallRequest>) {
      let size = 0;
      for await (const request of requests) size += request.payload?.body.length ?? 0;
      return { aggregated_payload_size: size };
    },
    async FullDuplexCall(requests: AsyncIterable<StreamingOutputCallRequest>, responses: ResponseStream<unknown>, call: CallContext) {
      echoMetadata(call);
      for await (const request of requests) {
        checkStatus(request.response_status);
        await writeResponses(request.response_parameters, responses, call);
      }
    },
    async HalfDuplexCall(requests: AsyncIterable<StreamingOutputCallRequest>, responses: ResponseStream<unknown>, call: CallContext) {
      echoMetadata(call);
      const all: StreamingOutputCallRequest[] = [];
      for await (const request of requests) all.push(request);
      for (const request of all) {
        checkStatus(request.response_status);
        await writeResponses(request.response_parameters, responses, call);
      }
    },
  };
}
