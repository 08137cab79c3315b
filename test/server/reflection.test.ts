/**
 * gRPC server reflection's answers, from its handler called directly: the services listed,
 * files by name, symbol and extension, with imports sent once per stream, and every request it
 * cannot answer given an error on the stream, which goes on. The services it may list are
 * checked at creation. test/reflection/ runs it over real connections and with grpcurl.
 */
import { describe, expect, it } from 'vitest';
import { JwtGrpcError } from '../../src/base/errors.js';
import { HEALTH_SERVICE_NAME } from '../../src/server/health.js';
import { REFLECTION_V1ALPHA_SERVICE_NAME, REFLECTION_V1_SERVICE_NAME, createReflectionServices } from '../../src/server/reflection.js';
import { GrpcStatus, type ServedService } from '../../src/contracts/handler-api.js';

const JWT = 'jwt.services.JwtService';

interface Response {
  valid_host: string;
  list_services_response?: { service: { name: string }[] };
  file_descriptor_response?: { file_descriptor_proto: Buffer[] };
  all_extension_numbers_response?: { base_type_name: string; extension_number: number[] };
  error_response?: { error_code: number; error_message: string };
}

async function ask(service: ServedService, ...requests: unknown[]): Promise<Response[]> {
  const answers: Response[] = [];
  async function* stream(): AsyncIterable<unknown> {
    yield* requests;
  }
  const info = service.implementation['ServerReflectionInfo'] as (
    requests: AsyncIterable<unknown>,
    responses: { write(r: Response): Promise<void> },
  ) => Promise<void>;
  await info(stream(), { write: async (response) => void answers.push(response) });
  return answers;
}

describe('createReflectionServices', () => {
  const [v1, v1alpha] = createReflectionServices({ services: [JWT, HEALTH_SERVICE_NAME] }) as [ServedService, ServedService];

  it('serves v1 and v1alpha', () => {
    expect([v1.name, v1alpha.name]).toEqual([REFLECTION_V1_SERVICE_NAME, REFLECTION_V1ALPHA_SERVICE_NAME]);
  });

  it('lists the services served and itself, sorted', async () => {
    const [answer] = await ask(v1, { host: 'h', message_request: 'list_services', list_services: '' });
    expect(answer?.valid_host).toBe('h');
    expect(answer?.list_services_response?.service.map((s) => s.name)).toEqual([
      HEALTH_SERVICE_NAME,
      REFLECTION_V1_SERVICE_NAME,
      REFLECTION_V1ALPHA_SERVICE_NAME,
      JWT,
    ]);
  });

  it('answers a file by name and by symbol, each file once per stream', async () => {
    const [byName, bySymbol, again] = await ask(
      v1,
      { host: '', message_request: 'file_by_filename', file_by_filename: 'jwt.proto' },
      { host: '', message_request: 'file_containing_symbol', file_containing_symbol: `${HEALTH_SERVICE_NAME}.Check` },
      { host: '', message_request: 'file_containing_symbol', file_containing_symbol: JWT },
    );
    expect(byName?.file_descriptor_response?.file_descriptor_proto).toHaveLength(1);
    expect(bySymbol?.file_descriptor_response?.file_descriptor_proto).toHaveLength(1);
    // Sent on this stream before: its imports are left out, the file itself is answered.
    expect(again?.file_descriptor_response?.file_descriptor_proto).toHaveLength(1);
  });

  it('answers the extension numbers of a message type: none here', async () => {
    const [answer] = await ask(v1, {
      host: '',
      message_request: 'all_extension_numbers_of_type',
      all_extension_numbers_of_type: 'grpc.health.v1.HealthCheckRequest',
    });
    expect(answer?.all_extension_numbers_response).toEqual({ base_type_name: 'grpc.health.v1.HealthCheckRequest', extension_number: [] });
  });

  it('answers NOT_FOUND on the stream for what it does not know, naming it, and goes on', async () => {
    const answers = await ask(
      v1,
      { host: '', message_request: 'file_by_filename', file_by_filename: 'nope.proto' },
      { host: '', message_request: 'file_containing_symbol', file_containing_symbol: 'no.Such' },
      {
        host: '',
        message_request: 'file_containing_extension',
        file_containing_extension: { containing_type: 'no.Such', extension_number: 5 },
      },
      { host: '', message_request: 'all_extension_numbers_of_type', all_extension_numbers_of_type: 'no.Such' },
      { host: '', message_request: 'list_services', list_services: '' },
    );
    expect(answers.slice(0, 4).map((a) => a.error_response)).toEqual([
      { error_code: GrpcStatus.NOT_FOUND, error_message: 'file "nope.proto" not found' },
      { error_code: GrpcStatus.NOT_FOUND, error_message: 'symbol "no.Such" not found' },
      { error_code: GrpcStatus.NOT_FOUND, error_message: 'extension 5 of "no.Such" not found' },
      { error_code: GrpcStatus.NOT_FOUND, error_message: 'message type "no.Such" not found' },
    ]);
    expect(answers[4]?.list_services_response).toBeDefined();
  });

  it('answers INVALID_ARGUMENT for a request that asks nothing, or one that is not protobuf', async () => {
    const malformed = v1.definition['ServerReflectionInfo']?.requestDeserialize(Buffer.from([0xff, 0xff]));
    const [empty, bad] = await ask(v1, { host: '' }, malformed);
    expect(empty?.error_response).toEqual({
      error_code: GrpcStatus.INVALID_ARGUMENT,
      error_message:
        'the request sets none of file_by_filename, file_containing_symbol, file_containing_extension, all_extension_numbers_of_type, list_services',
    });
    expect(bad?.error_response?.error_code).toBe(GrpcStatus.INVALID_ARGUMENT);
  });

  it('refuses a service list that is not a list of services declared in proto/', () => {
    expect(() => createReflectionServices({ services: 'x' as never })).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: 'services',
        message: 'option services: must be an array of fully qualified service names',
      }),
    );
    let refused: unknown;
    try {
      createReflectionServices({ services: [JWT, 'pkg.Unknown'] });
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(JwtGrpcError);
    expect((refused as JwtGrpcError).message).toBe('option services: "pkg.Unknown" is not a service declared in proto/');
  });
});
