/**
 * ServerReflectionInfo over a real connection, v1 and v1alpha, on each transport, with a
 * grpc-js client:
 * every kind of request, answers carrying the compiled descriptor bytes, errors (named exactly)
 * answered on the stream, and several requests on one stream.
 */
import { readFileSync } from 'node:fs';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JwtGrpcError, SERVICE_NAME } from '../../src/lib/index.js';
import { DESCRIPTOR_SET_PATH, indexDescriptorSet } from '../../src/documents/descriptor-set.js';
import { createReflectionServices } from '../../src/server/reflection.js';
import { statusName } from '../../bench/kit/grpc-clients.js';
import { TRANSPORTS } from '../../bench/kit/jwt-servers.js';
import { ReflectionStream } from './clients.js';
import { type TestServer, closeTestServers, startTestServer } from './server.js';

const ALL_SERVICES = [
  'grpc.health.v1.Health',
  'grpc.reflection.v1.ServerReflection',
  'grpc.reflection.v1alpha.ServerReflection',
  SERVICE_NAME,
];
const VERSIONS = ['v1', 'v1alpha'] as const;

/** The FileDescriptorProto bytes of each file, split out of the built set. */
const COMPILED = indexDescriptorSet(readFileSync(DESCRIPTOR_SET_PATH)).files;
function compiled(file: string): Buffer {
  const bytes = COMPILED.get(file)?.bytes;
  if (bytes === undefined) throw new Error(`the built descriptor set has no ${file}`);
  return bytes;
}

/** The name of a serialized FileDescriptorProto. */
function fileName(bytes: Buffer): string {
  return (descriptor.FileDescriptorProto.decode(bytes) as unknown as { name: string }).name;
}

describe.each(TRANSPORTS)('on transport %s', (transport) => {
  let server: TestServer;
  const streams: ReflectionStream[] = [];

  function open(version: (typeof VERSIONS)[number], address = server.address): ReflectionStream {
    const stream = new ReflectionStream(address, version);
    streams.push(stream);
    return stream;
  }

  beforeAll(async () => {
    server = await startTestServer({ transport });
  });

  afterEach(() => {
    for (const stream of streams.splice(0)) stream.close();
  });

  afterAll(async () => {
    await closeTestServers();
  });

  describe.each(VERSIONS)('grpc.reflection.%s', (version) => {
    it('lists exactly the services served, sorted', async () => {
      const answer = await open(version).ask({ host: 'h', list_services: '*' });
      expect(answer.message_response).toBe('list_services_response');
      expect(answer.list_services_response?.service.map((service) => service.name)).toEqual(ALL_SERVICES);
      expect(answer.valid_host).toBe('h');
      expect(answer.original_request).toMatchObject({ host: 'h', list_services: '*' });
    });

    it.each([
      ['jwt.services.JwtService', 'jwt.proto'],
      ['jwt.services.JwtService.VerifyJwt', 'jwt.proto'],
      ['jwt.services.GetJwksResponse', 'jwt.proto'],
      ['jwt.services.VerifyJwtResponse.Reason', 'jwt.proto'],
      ['jwt.services.VerifyJwtResponse.EXPIRED', 'jwt.proto'],
      ['jwt.services.GenerateJwtResponse.expires_at', 'jwt.proto'],
      ['grpc.health.v1.Health.Watch', 'grpc/health/v1/health.proto'],
      ['grpc.health.v1.HealthListResponse.StatusesEntry', 'grpc/health/v1/health.proto'],
      ['grpc.health.v1.HealthCheckResponse.SERVICE_UNKNOWN', 'grpc/health/v1/health.proto'],
      [`grpc.reflection.${version}.ServerReflectionRequest.message_request`, `grpc/reflection/${version}/reflection.proto`],
      [`grpc.reflection.${version}.ServerReflection.ServerReflectionInfo`, `grpc/reflection/${version}/reflection.proto`],
    ])('answers file_containing_symbol %s with the compiled bytes of %s', async (symbol, file) => {
      const answer = await open(version).ask({ file_containing_symbol: symbol });
      expect(answer.message_response).toBe('file_descriptor_response');
      expect(answer.file_descriptor_response?.file_descriptor_proto).toEqual([compiled(file)]);
    });

    it('answers file_by_filename with the compiled bytes', async () => {
      const stream = open(version);
      for (const file of COMPILED.keys()) {
        const answer = await stream.ask({ file_by_filename: file });
        expect(answer.file_descriptor_response?.file_descriptor_proto.map(fileName)).toEqual([file]);
        expect(answer.file_descriptor_response?.file_descriptor_proto[0]?.equals(compiled(file))).toBe(true);
      }
    });

    it('answers NOT_FOUND on the stream for unknown names, and the stream goes on', async () => {
      const stream = open(version);
      const requests: [Record<string, unknown>, string][] = [
        [{ file_containing_symbol: 'no.such.Symbol' }, 'symbol "no.such.Symbol" not found'],
        // Names are given without a leading dot.
        [{ file_containing_symbol: '.jwt.services.JwtService' }, 'symbol ".jwt.services.JwtService" not found'],
        [{ file_by_filename: 'nope.proto' }, 'file "nope.proto" not found'],
        [
          { file_containing_extension: { containing_type: 'jwt.services.GenerateJwtRequest', extension_number: 100 } },
          'extension 100 of "jwt.services.GenerateJwtRequest" not found',
        ],
        [{ all_extension_numbers_of_type: 'no.such.Message' }, 'message type "no.such.Message" not found'],
      ];
      for (const [request, message] of requests) {
        const answer = await stream.ask(request);
        expect(answer.message_response, JSON.stringify(request)).toBe('error_response');
        expect([statusName(answer.error_response?.error_code ?? -1), answer.error_response?.error_message]).toEqual(['NOT_FOUND', message]);
      }
      expect((await stream.ask({ file_containing_symbol: SERVICE_NAME })).message_response).toBe('file_descriptor_response');
      expect(await stream.end()).toBe(0);
    });

    it('answers all_extension_numbers_of_type for a message without extensions with none', async () => {
      const answer = await open(version).ask({ all_extension_numbers_of_type: 'jwt.services.GenerateJwtRequest' });
      expect(answer.all_extension_numbers_response).toEqual({ base_type_name: 'jwt.services.GenerateJwtRequest', extension_number: [] });
    });

    it('answers INVALID_ARGUMENT on the stream for a malformed request or one that asks nothing, and goes on', async () => {
      const stream = open(version);
      // The tag of field 4 (file_containing_symbol) without its length; wire type 7, which does not exist.
      for (const bytes of [[0x22], [0x4f]]) {
        const malformed = await stream.ask(Buffer.from(bytes));
        expect(statusName(malformed.error_response?.error_code ?? -1)).toBe('INVALID_ARGUMENT');
        expect(malformed.error_response?.error_message).toMatch(/^malformed grpc\.reflection\..*ServerReflectionInfo request/);
      }
      const empty = await stream.ask({ host: 'h' });
      expect([statusName(empty.error_response?.error_code ?? -1), empty.error_response?.error_message]).toEqual([
        'INVALID_ARGUMENT',
        'the request sets none of file_by_filename, file_containing_symbol, file_containing_extension, all_extension_numbers_of_type, list_services',
      ]);
      expect((await stream.ask({ list_services: '' })).list_services_response?.service).toHaveLength(4);
      expect(await stream.end()).toBe(0);
    });

    it('answers several requests sent at once, in order', async () => {
      const stream = open(version);
      const symbols = ['grpc.health.v1.Health', SERVICE_NAME, 'nope.Nope', `grpc.reflection.${version}.ErrorResponse`];
      for (const symbol of symbols) stream.send({ file_containing_symbol: symbol });
      stream.send({ list_services: '' });
      const answers = [];
      for (let i = 0; i <= symbols.length; i++) answers.push(await stream.next());
      expect(answers.map((answer) => answer.original_request?.['file_containing_symbol'] ?? 'list')).toEqual([...symbols, 'list']);
      expect(answers.map((answer) => answer.message_response)).toEqual([
        'file_descriptor_response',
        'file_descriptor_response',
        'error_response',
        'file_descriptor_response',
        'list_services_response',
      ]);
      expect(await stream.end()).toBe(0);
    });
  });

  it('answers v1 and v1alpha with the same bytes', async () => {
    for (const symbol of [
      'grpc.health.v1.HealthListResponse',
      'jwt.services.VerifyJwtResponse',
      'grpc.reflection.v1alpha.ServerReflection',
    ]) {
      const [v1, v1alpha] = await Promise.all(VERSIONS.map((version) => open(version).ask({ file_containing_symbol: symbol })));
      expect(v1alpha?.file_descriptor_response?.file_descriptor_proto).toEqual(v1?.file_descriptor_response?.file_descriptor_proto);
    }
  });

  it('does not list Health when it is not served', async () => {
    const bare = await startTestServer({ transport, health: false });
    const answer = await open('v1', bare.address).ask({ list_services: '' });
    expect(answer.list_services_response?.service.map((service) => service.name)).toEqual(
      ALL_SERVICES.filter((name) => !name.includes('health')),
    );
  });
});

it('refuses a service list that is not a list of services declared in proto/', () => {
  expect(() => createReflectionServices({ services: 'x' as never })).toThrow(
    expect.objectContaining({
      code: 'ERR_INVALID_OPTION',
      field: 'services',
      message: 'option services: must be an array of fully qualified service names',
    }),
  );
  expect(() => createReflectionServices({ services: [SERVICE_NAME, 'my.Own'] })).toThrow(JwtGrpcError);
  expect(() => createReflectionServices({ services: ['my.Own'] })).toThrow('option services: "my.Own" is not a service declared in proto/');
});
