/**
 * gRPC server reflection, grpc.reflection.v1 and its predecessor v1alpha
 * (proto/grpc/reflection/), as one transport-neutral bidi handler answering from the
 * compiled descriptors of proto/ (descriptor-set.ts). The protocol:
 * https://github.com/grpc/grpc/blob/master/doc/server-reflection.md; the answers follow
 * grpc-go's server (https://github.com/grpc/grpc-go/tree/master/reflection).
 */
import type { Buffer } from 'node:buffer';
import { invalidOption } from '../base/errors.js';
import { GrpcStatusError, type ResponseStream, GrpcStatus, type StatusCode } from '../contracts/handler-api.js';
import {
  type DescriptorFile,
  type DescriptorIndex,
  declaredServices,
  fileWithImports,
  indexOrRefuse,
  readDescriptorSet,
} from '../documents/descriptor-set.js';
import type { ServedService } from '../contracts/handler-api.js';
import { lazyProtoService, loadProtoService } from '../protos/load.js';

/**
 * A request on the stream that is not valid protobuf: the deserializer hands it to the
 * handler, which answers it with an error_response and keeps the stream open (a throwing
 * deserializer would end the whole stream).
 */
class MalformedRequest {
  constructor(readonly message: string) {}
}

export const REFLECTION_V1_SERVICE_NAME = 'grpc.reflection.v1.ServerReflection';
export const REFLECTION_V1ALPHA_SERVICE_NAME = 'grpc.reflection.v1alpha.ServerReflection';

/** Options of {@link createReflectionServices}. */
export interface ReflectionOptions {
  /**
   * Fully qualified names of the services served beside reflection, e.g.
   * `jwt.services.JwtService` and `grpc.health.v1.Health`: list_services answers these
   * and the two reflection services. Each must be declared in proto/.
   */
  readonly services: readonly string[];
}

/** ServerReflectionRequest as proto-loader decodes it (oneofs: the set member's name in `message_request`). */
interface ReflectionRequest {
  host: string;
  message_request?:
    | 'file_by_filename'
    | 'file_containing_symbol'
    | 'file_containing_extension'
    | 'all_extension_numbers_of_type'
    | 'list_services';
  file_by_filename?: string;
  file_containing_symbol?: string;
  file_containing_extension?: { containing_type: string; extension_number: number };
  all_extension_numbers_of_type?: string;
  list_services?: string;
}

/** ServerReflectionResponse as proto-loader encodes it: one of the last four is set. */
interface ReflectionResponse {
  valid_host: string;
  original_request?: ReflectionRequest;
  file_descriptor_response?: { file_descriptor_proto: Buffer[] };
  all_extension_numbers_response?: { base_type_name: string; extension_number: number[] };
  list_services_response?: { service: { name: string }[] };
  error_response?: { error_code: StatusCode; error_message: string };
}

/**
 * Creates grpc.reflection.v1.ServerReflection and grpc.reflection.v1alpha.ServerReflection
 * (the same handler; the two differ only in package name). Each answer to
 * file_by_filename, file_containing_symbol or file_containing_extension carries the
 * file's FileDescriptorProto as compiled, then those of its imports, transitively, less
 * the imports already sent on the stream. An unknown name is answered with an
 * error_response NOT_FOUND, a malformed request with INVALID_ARGUMENT; the stream goes on.
 * Throws `JwtGrpcError` (`ERR_INVALID_OPTION`) for a service proto/ does not declare, and
 * (`ERR_FILE`) when the package was not built.
 *
 * @example
 * ```ts
 * const [v1, v1alpha] = createReflectionServices({ services: [SERVICE_NAME, HEALTH_SERVICE_NAME] });
 * // serve each one's definition and implementation on a transport
 * ```
 */
export function createReflectionServices(options: ReflectionOptions): readonly ServedService[] {
  const set = readDescriptorSet();
  const declared = declaredServices(set);
  if (!Array.isArray(options?.services)) throw invalidOption('services', 'must be an array of fully qualified service names');
  for (const service of options.services) {
    if (typeof service !== 'string' || !declared.has(service)) {
      throw invalidOption('services', `${JSON.stringify(service)} is not a service declared in proto/`);
    }
  }
  const names = [...new Set([...options.services, REFLECTION_V1_SERVICE_NAME, REFLECTION_V1ALPHA_SERVICE_NAME])].sort();
  const listed = names.map((name) => ({ name }));
  // The whole index (every file's symbols and imports) is built on the first reflection call.
  let index: DescriptorIndex | undefined;
  const indexed = (): DescriptorIndex => (index ??= indexOrRefuse(set));

  async function serverReflectionInfo(
    requests: AsyncIterable<ReflectionRequest | MalformedRequest>,
    responses: ResponseStream<ReflectionResponse>,
  ): Promise<void> {
    // Files sent on this stream: later answers leave them out of the imports.
    const sent = new Set<string>();
    for await (const request of requests) await responses.write(answer(indexed(), listed, request, sent));
  }

  return [REFLECTION_V1_SERVICE_NAME, REFLECTION_V1ALPHA_SERVICE_NAME].map((name) => ({
    name,
    definition: reflectionDefinition(name),
    implementation: { ServerReflectionInfo: serverReflectionInfo },
  }));
}

function answer(
  index: DescriptorIndex,
  listed: { name: string }[],
  request: ReflectionRequest | MalformedRequest,
  sent: Set<string>,
): ReflectionResponse {
  if (request instanceof MalformedRequest) return error({ valid_host: '' }, GrpcStatus.INVALID_ARGUMENT, request.message);
  const base = { valid_host: request.host, original_request: request };
  switch (request.message_request) {
    case 'list_services':
      return { ...base, list_services_response: { service: listed } };
    case 'file_by_filename': {
      const name = request.file_by_filename ?? '';
      return withFile(base, index, index.files.get(name), sent, `file ${JSON.stringify(name)} not found`);
    }
    case 'file_containing_symbol': {
      const symbol = request.file_containing_symbol ?? '';
      return withFile(base, index, index.symbols.get(symbol), sent, `symbol ${JSON.stringify(symbol)} not found`);
    }
    case 'file_containing_extension': {
      const { containing_type: type = '', extension_number: number = 0 } = request.file_containing_extension ?? {};
      const file = index.extensions.get(type)?.get(number);
      return withFile(base, index, file, sent, `extension ${number} of ${JSON.stringify(type)} not found`);
    }
    case 'all_extension_numbers_of_type': {
      const type = request.all_extension_numbers_of_type ?? '';
      if (!index.messages.has(type)) return error(base, GrpcStatus.NOT_FOUND, `message type ${JSON.stringify(type)} not found`);
      const numbers = [...(index.extensions.get(type)?.keys() ?? [])].sort((a, b) => a - b);
      return { ...base, all_extension_numbers_response: { base_type_name: type, extension_number: numbers } };
    }
    default:
      return error(
        base,
        GrpcStatus.INVALID_ARGUMENT,
        'the request sets none of file_by_filename, file_containing_symbol, file_containing_extension, all_extension_numbers_of_type, list_services',
      );
  }
}

function error(base: Pick<ReflectionResponse, 'valid_host' | 'original_request'>, code: StatusCode, message: string): ReflectionResponse {
  return { ...base, error_response: { error_code: code, error_message: message } };
}

function withFile(
  base: Pick<ReflectionResponse, 'valid_host' | 'original_request'>,
  index: DescriptorIndex,
  file: DescriptorFile | undefined,
  sent: Set<string>,
  notFound: string,
): ReflectionResponse {
  if (file === undefined) return error(base, GrpcStatus.NOT_FOUND, notFound);
  return { ...base, file_descriptor_response: { file_descriptor_proto: fileWithImports(index, file, sent) } };
}

const definitions = new Map<string, ServedService['definition']>();

/** Reflection's one method, in v1 and v1alpha alike (a test holds this to the .proto files). @internal */
export const REFLECTION_METHOD_SHAPES = { ServerReflectionInfo: { requestStream: true, responseStream: true } } as const;

/**
 * The reflection service `name`'s method and codecs, loaded once per process. A request
 * that is not valid protobuf comes to the handler as a {@link MalformedRequest}, so that
 * it is answered on the stream instead of ending it.
 */
function reflectionDefinition(name: string): ServedService['definition'] {
  let definition = definitions.get(name);
  if (definition === undefined) {
    const version = name === REFLECTION_V1_SERVICE_NAME ? 'v1' : 'v1alpha';
    const loaded = lazyProtoService(name, REFLECTION_METHOD_SHAPES, () =>
      loadProtoService(`grpc/reflection/${version}/reflection.proto`, name),
    );
    definition = Object.fromEntries(
      Object.entries(loaded).map(([method, methodDefinition]) => [
        method,
        {
          ...methodDefinition,
          requestDeserialize(bytes: Buffer): unknown {
            try {
              return methodDefinition.requestDeserialize(bytes);
            } catch (err) {
              if (err instanceof GrpcStatusError) return new MalformedRequest(err.details);
              throw err;
            }
          },
        },
      ]),
    );
    definitions.set(name, definition);
  }
  return definition;
}
