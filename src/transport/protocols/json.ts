/**
 * The proto3 JSON mapping (https://protobuf.dev/programming-guides/json/) of the messages
 * of every method the compiled descriptor set (src/server/descriptor-set.ts) declares, by
 * @bufbuild/protobuf: field names as protoc's json_name (lowerCamelCase), 64-bit integers
 * as strings, bytes as base64, enums by name. A JSON request is read into the message,
 * written as protobuf and handed to the method's own codec; its answer the other way, so
 * handlers see the same values whatever the protocol. An unknown field is refused, never
 * dropped.
 */
import { Buffer } from 'node:buffer';
import type { DescMessage, Registry } from '@bufbuild/protobuf';
import { bufProtobuf, bufProtobufWkt } from '../../optional-deps.js';
import { readDescriptorSet } from '../../server/descriptor-set.js';
import { GrpcStatus, GrpcStatusError } from '../handler-api.js';
import type { Route } from '../http2/router.js';
import type { MessageCodec } from './call.js';

let registry: Registry | undefined;

/** The registry of the shipped descriptor set, built on the first JSON call. */
function descriptorRegistry(): Registry {
  if (registry === undefined) {
    const { createFileRegistry, fromBinary } = bufProtobuf();
    registry = createFileRegistry(fromBinary(bufProtobufWkt().FileDescriptorSetSchema, readDescriptorSet()));
  }
  return registry;
}

/** The method of `path` (`/package.Service/Method`) in the descriptor set, or undefined. */
function methodOf(path: string): { input: DescMessage; output: DescMessage } | undefined {
  const slash = path.indexOf('/', 1);
  const service = descriptorRegistry().getService(path.slice(1, slash));
  const name = path.slice(slash + 1);
  return service?.methods.find((method) => method.name === name);
}

/**
 * The JSON codec of `route`'s messages, or undefined when the descriptor set does not
 * declare its method (a service added with its own codecs and no descriptors).
 *
 * @example
 * ```ts
 * // hidden: declare const route: Route;
 * jsonCodec(route)?.decode(Buffer.from('{"ttlSeconds":"60"}'));
 * ```
 */
export function jsonCodec(route: Route): MessageCodec | undefined {
  const method = methodOf(route.path);
  if (method === undefined) return undefined;
  const { fromJson, toBinary, fromBinary, toJson } = bufProtobuf();
  const { input, output } = method;
  const definition = route.definition;
  return {
    decode(bytes) {
      let json: unknown;
      try {
        json = JSON.parse(bytes.toString('utf8'));
      } catch (err) {
        throw new GrpcStatusError(GrpcStatus.INVALID_ARGUMENT, `the request is not JSON: ${(err as Error).message}`);
      }
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
      const bytes = definition.responseSerialize(response);
      return Buffer.from(JSON.stringify(toJson(output, fromBinary(output, bytes))), 'utf8');
    },
  };
}
