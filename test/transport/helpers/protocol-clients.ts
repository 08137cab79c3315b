/**
 * Clients of the Connect and gRPC-Web protocols written elsewhere (@connectrpc/connect-node),
 * for JwtService as the shipped descriptor set declares it (no generated code), and a raw
 * HTTP/2 request for what a test must see byte for byte (statuses, headers, bodies).
 */
import { Buffer } from 'node:buffer';
import { connect as http2Connect } from 'node:http2';
import { type DescService, createFileRegistry, fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { type Client, createClient } from '@connectrpc/connect';
import { createConnectTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { expect } from 'vitest';
import type { JwtClient } from '../../../bench/kit/grpc-clients.js';
import { readDescriptorSet } from '../../../src/documents/descriptor-set.js';

const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, readDescriptorSet()));

/** A service's descriptor, from the FileDescriptorSet the build writes. */
function serviceOf(name: string): DescService {
  const service = registry.getService(name);
  if (service === undefined) throw new Error(`the descriptor set has no ${name}`);
  return service;
}

/** JwtService's descriptor. */
export const JWT_SERVICE = serviceOf('jwt.services.JwtService');

/** Health's descriptor (its Watch streams: Connect's streaming envelope, gRPC-Web's frames). */
export const HEALTH_SERVICE = serviceOf('grpc.health.v1.Health');

/** The five methods, as connect-es names them; messages loosely typed (no generated code). */
// biome-ignore-start lint/suspicious/noExplicitAny: messages of a runtime-built service have no static type
export type LooseJwtClient = Record<
  'generateJwt' | 'verifyJwt' | 'getJwks' | 'getStatusList' | 'revokeJwt',
  (request: any, options?: any) => Promise<any>
>;
// biome-ignore-end lint/suspicious/noExplicitAny: -

/** Which client: Connect or gRPC-Web, in JSON or protobuf. */
export interface ProtocolClientKind {
  readonly protocol: 'connect' | 'grpc-web';
  readonly binary: boolean;
}

/** Every client kind, for `it.each`. */
export const CLIENT_KINDS: readonly ProtocolClientKind[] = [
  { protocol: 'connect', binary: false },
  { protocol: 'connect', binary: true },
  { protocol: 'grpc-web', binary: true },
  { protocol: 'grpc-web', binary: false },
];

/** A connect-node transport to `port` (HTTP/2, plaintext). */
function transportOf(port: number, kind: ProtocolClientKind) {
  const options = { baseUrl: `http://127.0.0.1:${port}`, httpVersion: '2' as const, useBinaryFormat: kind.binary };
  return kind.protocol === 'connect' ? createConnectTransport(options) : createGrpcWebTransport(options);
}

/** A connect-node client of JwtService on `port`. */
export function protocolClient(port: number, kind: ProtocolClientKind): LooseJwtClient {
  return createClient(JWT_SERVICE, transportOf(port, kind)) as Client<DescService> as unknown as LooseJwtClient;
}

/** The first status health's Watch streams for `service` ('' for the server), read by a connect-node client; the call is then cancelled. */
export async function firstWatchedStatus(port: number, kind: ProtocolClientKind, service = ''): Promise<unknown> {
  const client = createClient(HEALTH_SERVICE, transportOf(port, kind)) as unknown as {
    watch(request: object, options: { signal: AbortSignal }): AsyncIterable<{ status: unknown }>;
  };
  const controller = new AbortController();
  try {
    for await (const answer of client.watch({ service }, { signal: controller.signal })) return answer.status;
    return undefined;
  } finally {
    controller.abort();
  }
}

/** One HTTP/2 response, whole. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

/**
 * Sends one request over a fresh HTTP/2 connection to `port` and reads the whole answer.
 * `keepOpen`: the request body is written but never ended (a client that stalls).
 */
export async function rawRequest(
  port: number,
  headers: Readonly<Record<string, string>>,
  body?: Buffer | string,
  keepOpen = false,
): Promise<RawResponse> {
  const session = http2Connect(`http://127.0.0.1:${port}`);
  try {
    return await new Promise<RawResponse>((resolve, reject) => {
      session.on('error', reject);
      const stream = session.request({ ':method': 'POST', ...headers }, { endStream: body === undefined });
      const chunks: Buffer[] = [];
      let status = 0;
      let responseHeaders: RawResponse['headers'] = {};
      stream.on('response', (fields) => {
        status = Number(fields[':status']);
        responseHeaders = fields as RawResponse['headers'];
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => resolve({ status, headers: responseHeaders, body: Buffer.concat(chunks) }));
      stream.on('error', reject);
      if (body !== undefined && keepOpen) stream.write(body);
      else if (body !== undefined) stream.end(body);
    });
  } finally {
    session.close();
  }
}

/** A gRPC Length-Prefixed-Message (flag 0: uncompressed; 1: compressed). */
export function envelope(bytes: Buffer, flag = 0): Buffer {
  const prefix = Buffer.alloc(5);
  prefix[0] = flag;
  prefix.writeUInt32BE(bytes.length, 1);
  return Buffer.concat([prefix, bytes]);
}

/** The frames of a gRPC-Web (or Connect streaming) body: flag and payload of each. */
export function frames(body: Buffer): { flag: number; payload: Buffer }[] {
  const out: { flag: number; payload: Buffer }[] = [];
  for (let offset = 0; offset + 5 <= body.length; ) {
    const length = body.readUInt32BE(offset + 1);
    out.push({ flag: body[offset] as number, payload: body.subarray(offset + 5, offset + 5 + length) });
    offset += 5 + length;
  }
  return out;
}

/**
 * Calls all five JwtService methods through `client` and holds each answer to the one
 * `grpc` (the package's gRPC client) gets on the same server: GenerateJwt's token verifies
 * over gRPC, VerifyJwt, GetJwks and GetStatusList answer the same, and RevokeJwt (with
 * `adminSecret`) revokes for gRPC too.
 */
export async function expectAnswersAsGrpc(client: LooseJwtClient, grpc: JwtClient, adminSecret: string): Promise<void> {
  const issued = await client.generateJwt({ algorithm: 'ES256', subject: 'ada', ttlSeconds: 60n });
  expect(issued.sub).toBe('ada');
  expect(typeof issued.expiresAt).toBe('bigint');
  const overGrpc = await grpc.verifyJwt({ jwt: issued.jwt });
  expect(overGrpc).toMatchObject({ valid: true, sub: 'ada' });
  const answer = await client.verifyJwt({ jwt: issued.jwt });
  expect({ valid: answer.valid, sub: answer.sub, claims: answer.claimsJson }).toEqual({
    valid: true,
    sub: 'ada',
    claims: overGrpc.claims_json,
  });
  expect((await client.getJwks({})).jwksJson).toBe((await grpc.getJwks()).jwks_json);
  expect((await client.getStatusList({})).token).toBe((await grpc.getStatusList({})).token);
  const revoked = await client.revokeJwt({ jwt: issued.jwt }, { headers: { authorization: `Bearer ${adminSecret}` } });
  expect(revoked.revoked).toBe(true);
  expect(await grpc.verifyJwt({ jwt: issued.jwt })).toMatchObject({ valid: false, reason: 'REVOKED' });
}
