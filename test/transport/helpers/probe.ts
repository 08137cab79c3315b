/**
 * "test.Probe": a service with JSON codecs and one method of each call kind, whose
 * handlers each test supplies, so a test can watch the server side of a call (signal,
 * deadline, metadata) while a real client drives it. The request deserializer refuses
 * anything that is not JSON with INVALID_ARGUMENT, as a protobuf codec refuses a
 * malformed message.
 */
import { type ChannelCredentials, type Client, credentials, makeGenericClientConstructor } from '@grpc/grpc-js';
import { GrpcStatusError, type MethodDescriptor, type ServiceDescriptor, GrpcStatus } from '../../../src/contracts/handler-api.js';

const encode = (value: unknown): Buffer => Buffer.from(JSON.stringify(value ?? null));
function decode(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new GrpcStatusError(GrpcStatus.INVALID_ARGUMENT, `request is not JSON (${bytes.length} bytes)`);
  }
}

function method(name: string, requestStream: boolean, responseStream: boolean): MethodDescriptor<unknown, unknown> {
  return {
    path: `/test.Probe/${name}`,
    requestStream,
    responseStream,
    requestSerialize: encode,
    requestDeserialize: decode,
    responseSerialize: encode,
    responseDeserialize: (bytes) => JSON.parse(bytes.toString('utf8')) as unknown,
  };
}

export const PROBE: ServiceDescriptor = {
  Unary: method('Unary', false, false),
  ServerStream: method('ServerStream', false, true),
  ClientStream: method('ClientStream', true, false),
  Bidi: method('Bidi', true, true),
};

const ProbeClient = makeGenericClientConstructor(
  Object.fromEntries(Object.entries(PROBE).map(([name, m]) => [name, { ...m, originalName: name }])) as never,
  'Probe',
);

/** A grpc-js client of test.Probe; `Unary`, `ServerStream`, `ClientStream`, `Bidi` as grpc-js methods. */
export function probeClient(
  port: number,
  options: { credentials?: ChannelCredentials; channelOptions?: Record<string, unknown>; host?: string } = {},
): Client & Record<string, (...args: unknown[]) => unknown> {
  return new ProbeClient(
    `${options.host ?? '127.0.0.1'}:${port}`,
    options.credentials ?? credentials.createInsecure(),
    options.channelOptions ?? {},
  ) as never;
}
