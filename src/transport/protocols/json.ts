/**
 * The proto3 JSON mapping (https://protobuf.dev/programming-guides/json/) of the messages
 * of every method the compiled descriptor set (src/documents/descriptor-set.ts) declares, by
 * @bufbuild/protobuf: field names as protoc's json_name (lowerCamelCase), 64-bit integers
 * as strings, bytes as base64, enums by name. A JSON request is read into the message,
 * written as protobuf and handed to the method's own codec; its answer the other way, so
 * handlers see the same values whatever the protocol. An unknown field is refused, never
 * dropped. A method that brings its own shortcut through the mapping (`requestFromJson`,
 * `responseToJson`: JwtService's, src/jwt-service/codec/json.ts) has its messages read and
 * written by it, and by the mapping whenever the shortcut leaves a message to it.
 */
import { Buffer } from 'node:buffer';
import type { DescMessage, Registry } from '@bufbuild/protobuf';
import { readDescriptorSet } from '../../documents/descriptor-set.js';
import { GrpcStatus, GrpcStatusError } from '../../contracts/handler-api.js';
import type { Route } from '../http2/router.js';
import type { MessageCodec } from './call.js';

/** @bufbuild/protobuf and the registry of the shipped descriptor set, once loaded. */
interface JsonMapping {
  readonly protobuf: typeof import('@bufbuild/protobuf');
  readonly registry: Registry;
}

let mapping: JsonMapping | undefined;
let loading: Promise<void> | undefined;

/**
 * Loads the mapping, once per process: undefined when it is loaded, else a promise that
 * settles when it is (a failed load is tried again by the next call). An async import,
 * so that the event loop serves other calls while the package's files are read: it is
 * loaded only by a server that meets a JSON call, and costs that server about 0.2 s once.
 *
 * @example
 * ```ts
 * // hidden: declare const route: Route;
 * await loadJsonMapping();
 * jsonCodec(route);
 * ```
 */
export function loadJsonMapping(): Promise<void> | undefined {
  if (mapping !== undefined) return undefined;
  loading ??= (async () => {
    const [protobuf, wkt] = await Promise.all([import('@bufbuild/protobuf'), import('@bufbuild/protobuf/wkt')]);
    const registry = protobuf.createFileRegistry(protobuf.fromBinary(wkt.FileDescriptorSetSchema, readDescriptorSet()));
    mapping = { protobuf, registry };
  })().catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

/** The method of `path` (`/package.Service/Method`) in the descriptor set, or undefined. */
function methodOf(registry: Registry, path: string): { input: DescMessage; output: DescMessage } | undefined {
  const slash = path.indexOf('/', 1);
  const name = path.slice(slash + 1);
  return registry.getService(path.slice(1, slash))?.methods.find((method) => method.name === name);
}

/**
 * The JSON codec of `route`'s messages once {@link loadJsonMapping} has loaded, or undefined
 * when the descriptor set does not declare its method (a service added with its own codecs).
 *
 * @example
 * ```ts
 * // hidden: declare const route: Route;
 * jsonCodec(route)?.decode(Buffer.from('{"ttlSeconds":"60"}'));
 * ```
 */
export function jsonCodec(route: Route): MessageCodec | undefined {
  if (mapping === undefined) return undefined;
  let codec = codecs.get(route);
  if (codec === undefined) {
    codec = buildCodec(mapping, route) ?? null;
    codecs.set(route, codec);
  }
  return codec ?? undefined;
}

/** Each route's codec, built by its first JSON call (null: its method has no mapping); a route lives as long as its server. */
const codecs = new WeakMap<Route, MessageCodec | null>();

function buildCodec(mapping: JsonMapping, route: Route): MessageCodec | undefined {
  const method = methodOf(mapping.registry, route.path);
  if (method === undefined) return undefined;
  const { fromJson, toBinary, fromBinary, toJson } = mapping.protobuf;
  const { input, output } = method;
  const definition = route.definition;
  const { requestFromJson, responseToJson } = definition;
  return {
    decode(bytes) {
      let json: unknown;
      try {
        json = JSON.parse(bytes.toString('utf8'));
      } catch (err) {
        throw new GrpcStatusError(GrpcStatus.INVALID_ARGUMENT, `the request is not JSON: ${(err as Error).message}`);
      }
      const direct = requestFromJson?.(json);
      if (direct !== undefined) return direct;
      let message: ReturnType<typeof fromJson>;
      try {
        message = fromJson(input, json as Parameters<typeof fromJson>[1]);
      } catch (err) {
        throw new GrpcStatusError(GrpcStatus.INVALID_ARGUMENT, (err as Error).message);
      }
      const binary = toBinary(input, message);
      return definition.requestDeserialize(Buffer.from(binary.buffer, binary.byteOffset, binary.byteLength));
    },
    encode(response) {
      const direct = responseToJson?.(response);
      if (direct !== undefined) return direct;
      const bytes = definition.responseSerialize(response);
      return Buffer.from(JSON.stringify(toJson(output, fromBinary(output, bytes))), 'utf8');
    },
  };
}
