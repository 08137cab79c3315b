/**
 * connectrpc.conformance.v1.ConformanceService, the Connect conformance suite's test service
 * (connectrpc.com/conformance, docs/testing_servers.md), on jwt-grpc's handler API: each
 * call answers what its request's response definition asks for (headers, data, an error,
 * trailers, a delay) and echoes what the server saw (request headers, timeout, every request
 * as a google.protobuf.Any). The suite's own grpc-go server (internal/app/grpcserver) is the
 * model followed case by case. Unimplemented is left out: the transport answers it.
 */
import { Buffer } from 'node:buffer';
import { setTimeout as sleep } from 'node:timers/promises';
import protobuf from 'protobufjs';
import { repoPath } from '../../bench/kit/paths.js';
import {
  type CallContext,
  CallMetadata,
  GrpcStatusError,
  type MethodDescriptor,
  type ResponseStream,
  type ServiceDescriptor,
  type ServiceImplementation,
  type StatusCode,
} from '../../src/contracts/handler-api.js';

const PROTO_DIR = `${repoPath('test', 'conformance', 'proto')}/`;
const PACKAGE = 'connectrpc.conformance.v1';
const SERVICE = `${PACKAGE}.ConformanceService`;
const TYPE_URL_PREFIX = 'type.googleapis.com/';

/** The suite's messages as the decoder gives them (protobufjs, camelCase, bytes as Buffer). */
interface Header {
  name: string;
  value?: string[];
}
/** protobufjs's bundled google/protobuf/any.proto keeps the proto's field names. */
interface Any {
  type_url: string;
  value: Uint8Array;
}
interface ErrorDefinition {
  code?: number;
  message?: string;
  details?: Any[];
}
interface ResponseDefinition {
  responseHeaders?: Header[];
  responseTrailers?: Header[];
  responseDelayMs?: number;
  /** Unary: one response's data, or `error`. */
  responseData?: Buffer | Buffer[];
  error?: ErrorDefinition;
}
interface ConformanceRequest {
  responseDefinition?: ResponseDefinition;
  fullDuplex?: boolean;
}
/** A request with the bytes it came in, echoed as they were sent. */
interface Received {
  readonly message: ConformanceRequest;
  readonly any: Any;
}
interface RequestInfo {
  requestHeaders: Header[];
  timeoutMs?: number;
  requests: Any[];
}

let loaded: protobuf.Root | undefined;

/** The suite's protos (test/conformance/proto), with protobufjs's google/protobuf ones. */
export function conformanceRoot(): protobuf.Root {
  if (loaded !== undefined) return loaded;
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (target.startsWith('google/protobuf/') ? target : `${PROTO_DIR}${target}`);
  root.loadSync(['connectrpc/conformance/v1/service.proto', 'connectrpc/conformance/v1/server_compat.proto', 'google/rpc/status.proto']);
  loaded = root;
  return root;
}

const DECODE_OPTIONS: protobuf.IConversionOptions = { bytes: Buffer, longs: Number, oneofs: false };

/** Plain-object codecs of `typeName`; a request that does not decode answers INTERNAL (gRPC's status for a request proto that does not parse). */
function codec(typeName: string): { decode: (bytes: Buffer) => unknown; encode: (message: unknown) => Buffer } {
  const type = conformanceRoot().lookupType(typeName);
  return {
    decode: (bytes) => type.toObject(type.decode(bytes), DECODE_OPTIONS),
    encode: (message) => Buffer.from(type.encode(type.fromObject(message as Record<string, unknown>)).finish()),
  };
}

/** One method: requests decode to {@link Received}, keeping their bytes for the echo. */
function method(name: string, requestStream: boolean, responseStream: boolean, noSideEffects = false): MethodDescriptor<Received, unknown> {
  const requestType = `${PACKAGE}.${name}Request`;
  const request = codec(requestType);
  const response = codec(`${PACKAGE}.${name}Response`);
  return {
    path: `/${SERVICE}/${name}`,
    requestStream,
    responseStream,
    requestDeserialize: (bytes) => ({
      message: request.decode(bytes) as ConformanceRequest,
      any: { type_url: `${TYPE_URL_PREFIX}${requestType}`, value: Buffer.from(bytes) },
    }),
    responseSerialize: response.encode,
    noSideEffects,
  };
}

/** The service's definition, without Unimplemented (the server must not serve it). */
export function conformanceService(): ServiceDescriptor {
  return {
    Unary: method('Unary', false, false),
    IdempotentUnary: method('IdempotentUnary', false, false, true),
    ServerStream: method('ServerStream', false, true),
    ClientStream: method('ClientStream', true, false),
    BidiStream: method('BidiStream', true, true),
  };
}

/** Headers of the suite as call metadata: `-bin` values come base64-encoded. */
function toMetadata(headers: readonly Header[] | undefined): CallMetadata {
  const metadata = new CallMetadata();
  for (const { name, value = [] } of headers ?? []) {
    for (const item of value) metadata.add(name, name.toLowerCase().endsWith('-bin') ? Buffer.from(item, 'base64') : item);
  }
  return metadata;
}

/** What the server saw of the call, for the echo: `-bin` values base64-encoded, as connect-go's EncodeBinaryHeader. */
function requestInfo(call: CallContext, requests: readonly Received[]): RequestInfo {
  const requestHeaders: Header[] = [];
  for (const [name, values] of call.metadata.entries()) {
    requestHeaders.push({
      name,
      value: values.map((value) => (typeof value === 'string' ? value : value.toString('base64').replace(/=+$/, ''))),
    });
  }
  const info: RequestInfo = { requestHeaders, requests: requests.map((request) => request.any) };
  if (Number.isFinite(call.deadline)) info.timeoutMs = Math.max(0, Math.round(call.deadline - Date.now()));
  return info;
}

/** The error a definition asks for, its details carrying `extra` too, as google.rpc.Status in grpc-status-details-bin. */
function definedError(error: ErrorDefinition, extra: RequestInfo | undefined): GrpcStatusError {
  const root = conformanceRoot();
  const details = [...(error.details ?? [])];
  if (extra !== undefined) {
    const type = root.lookupType(`${PACKAGE}.ConformancePayload.RequestInfo`);
    details.push({
      type_url: `${TYPE_URL_PREFIX}${PACKAGE}.ConformancePayload.RequestInfo`,
      value: type.encode(type.fromObject(extra)).finish(),
    });
  }
  const code = (error.code ?? 0) as StatusCode;
  const message = error.message ?? '';
  const status = root.lookupType('google.rpc.Status');
  const encoded = Buffer.from(status.encode(status.fromObject({ code, message, details })).finish());
  return new GrpcStatusError(code, message, { metadata: new CallMetadata().set('grpc-status-details-bin', encoded) });
}

async function delay(definition: ResponseDefinition | undefined, call: CallContext): Promise<void> {
  const ms = definition?.responseDelayMs ?? 0;
  if (ms > 0) await sleep(ms, undefined, { signal: call.signal }).catch(() => {});
}

/** Headers now, trailers at the end, as the definition asks. */
function applyMetadata(definition: ResponseDefinition | undefined, call: CallContext): void {
  if (definition === undefined) return;
  call.sendMetadata(toMetadata(definition.responseHeaders));
  call.setTrailers(toMetadata(definition.responseTrailers));
}

/** Unary and client-stream: one response, or the defined error with what was seen in its details. */
async function answerOnce(requests: readonly Received[], call: CallContext): Promise<{ payload: unknown }> {
  const definition = requests[0]?.message.responseDefinition;
  applyMetadata(definition, call);
  await delay(definition, call);
  const info = requestInfo(call, requests);
  if (definition?.error !== undefined) throw definedError(definition.error, info);
  const data = definition?.responseData;
  return { payload: { requestInfo: info, ...(Buffer.isBuffer(data) && { data }) } };
}

/** The data a stream's definition asks for. */
function streamData(definition: ResponseDefinition | undefined): Buffer[] {
  const data = definition?.responseData;
  return Array.isArray(data) ? data : [];
}

/** Sends the responses from `sent` on, the first with the request info, then the defined error (if any). */
async function finishStream(
  definition: ResponseDefinition | undefined,
  sent: number,
  requests: readonly Received[],
  responses: ResponseStream<unknown>,
  call: CallContext,
): Promise<void> {
  const data = streamData(definition);
  for (let index = sent; index < data.length; index++) {
    await delay(definition, call);
    const info = index === 0 ? { requestInfo: requestInfo(call, requests) } : {};
    await responses.write({ payload: { data: data[index], ...info } });
  }
  if (definition?.error !== undefined) throw definedError(definition.error, data.length === 0 ? requestInfo(call, requests) : undefined);
}

/**
 * Full duplex: one response per request while the definition has data, each echoing the
 * requests since the last one (the whole request info on the first). Returns how many it sent
 * and the requests not yet echoed.
 */
async function fullDuplex(
  first: Received,
  rest: AsyncIterator<Received>,
  responses: ResponseStream<unknown>,
  call: CallContext,
): Promise<{ sent: number; pending: Received[] }> {
  const definition = first.message.responseDefinition;
  const data = streamData(definition);
  let pending: Received[] = [first];
  let sent = 0;
  for (;;) {
    if (sent >= data.length) return { sent, pending };
    const requestInfoOf = sent === 0 ? requestInfo(call, pending) : { requests: pending.map((request) => request.any) };
    await delay(definition, call);
    await responses.write({ payload: { data: data[sent], requestInfo: requestInfoOf } });
    sent++;
    pending = [];
    const next = await rest.next();
    if (next.done === true) return { sent, pending };
    pending.push(next.value);
  }
}

async function collect(requests: AsyncIterable<Received>): Promise<Received[]> {
  const all: Received[] = [];
  for await (const request of requests) all.push(request);
  return all;
}

/** Handlers of {@link conformanceService}. */
export function conformanceImplementation(): ServiceImplementation {
  const unary = (request: Received, call: CallContext) => answerOnce([request], call);
  return {
    Unary: unary,
    IdempotentUnary: unary,
    ClientStream: async (requests: AsyncIterable<Received>, call: CallContext) => answerOnce(await collect(requests), call),
    ServerStream: async (request: Received, responses: ResponseStream<unknown>, call: CallContext) => {
      const definition = request.message.responseDefinition;
      applyMetadata(definition, call);
      await finishStream(definition, 0, [request], responses, call);
    },
    BidiStream: async (requests: AsyncIterable<Received>, responses: ResponseStream<unknown>, call: CallContext) => {
      const iterator = requests[Symbol.asyncIterator]();
      const first = await iterator.next();
      if (first.done === true) return;
      const definition = first.value.message.responseDefinition;
      if (first.value.message.fullDuplex === true) {
        applyMetadata(definition, call);
        // Once the data runs out the server stops reading and ends the call, as the suite's servers do:
        // a client that waits for a response before its next request would otherwise wait forever.
        const { sent, pending } = await fullDuplex(first.value, iterator, responses, call);
        await finishStream(definition, sent, pending, responses, call);
        return;
      }
      // Half duplex: nothing is sent before every request is in.
      const all = [first.value];
      for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) all.push(next.value);
      applyMetadata(definition, call);
      await finishStream(definition, 0, all, responses, call);
    },
  };
}
