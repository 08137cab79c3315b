/**
 * A server registers JwtService, health and reflection from method tables written in the
 * code. JwtService's codecs are its own and never parse a .proto; health and reflection
 * parse theirs (proto-loader, protobufjs) only on the first call that needs a codec from
 * them (src/protos/load.ts, lazyProtoService). Each table must say exactly what its .proto
 * says, or a client would find a method missing or mis-shaped.
 */
import { createFileRegistry, fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema, MethodOptions_IdempotencyLevel } from '@bufbuild/protobuf/wkt';
import { describe, expect, it } from 'vitest';
import { readDescriptorSet } from '../../src/documents/descriptor-set.js';
import { JWT_SERVICE_METHOD_SHAPES, jwtServiceDefinition } from '../../src/jwt-service/definition.js';
import { SERVICE_NAME } from '../../src/jwt-service/definition.js';
import { HEALTH_METHOD_SHAPES, HEALTH_SERVICE_NAME } from '../../src/server/health.js';
import { REFLECTION_METHOD_SHAPES, REFLECTION_V1ALPHA_SERVICE_NAME, REFLECTION_V1_SERVICE_NAME } from '../../src/server/reflection.js';
import { PROTO_PATH } from '../../src/base/package-root.js';
import { type MethodShape, lazyProtoService, loadProtoService } from '../../src/protos/load.js';
import type { ServiceDescriptor } from '../../src/contracts/handler-api.js';

/** Path and stream shape of each method: what a server needs before its first call. */
function shapesOf(service: ServiceDescriptor): Record<string, { path: string } & MethodShape> {
  return Object.fromEntries(
    Object.entries(service).map(([name, m]) => [name, { path: m.path, requestStream: m.requestStream, responseStream: m.responseStream }]),
  );
}

describe('the method tables a server starts from match the .proto files', () => {
  it('JwtService', () => {
    const proto = loadProtoService(PROTO_PATH, SERVICE_NAME);
    expect(shapesOf(jwtServiceDefinition())).toEqual(shapesOf(proto));
    expect(Object.keys(JWT_SERVICE_METHOD_SHAPES).sort()).toEqual(Object.keys(proto).sort());
  });

  it('JwtService: the methods the compiled .proto marks NO_SIDE_EFFECTS, and only they, may be called by GET', () => {
    const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, readDescriptorSet()));
    const fromProto = (registry.getService(SERVICE_NAME)?.methods ?? [])
      .filter((method) => method.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS)
      .map((method) => method.name);
    const marked = Object.entries(jwtServiceDefinition())
      .filter(([, method]) => method.noSideEffects === true)
      .map(([name]) => name);
    expect(marked.sort()).toEqual(fromProto.sort());
    expect(marked).toEqual(['GetJwks', 'GetStatusList']);
  });

  it('grpc.health.v1.Health', () => {
    const proto = loadProtoService('grpc/health/v1/health.proto', HEALTH_SERVICE_NAME);
    expect(shapesOf(lazyProtoService(HEALTH_SERVICE_NAME, HEALTH_METHOD_SHAPES, () => proto))).toEqual(shapesOf(proto));
  });

  it.each([
    ['v1', REFLECTION_V1_SERVICE_NAME],
    ['v1alpha', REFLECTION_V1ALPHA_SERVICE_NAME],
  ])('reflection %s', (version, name) => {
    const proto = loadProtoService(`grpc/reflection/${version}/reflection.proto`, name);
    expect(shapesOf(lazyProtoService(name, REFLECTION_METHOD_SHAPES, () => proto))).toEqual(shapesOf(proto));
  });
});

describe('lazyProtoService', () => {
  it('loads the .proto once, on the first codec call, and delegates to its codecs', () => {
    let loads = 0;
    const proto = loadProtoService('grpc/health/v1/health.proto', HEALTH_SERVICE_NAME);
    const lazy = lazyProtoService(HEALTH_SERVICE_NAME, HEALTH_METHOD_SHAPES, () => {
      loads++;
      return proto;
    });
    expect(loads).toBe(0);
    const bytes = lazy['Check']!.requestSerialize!({ service: 'x' });
    expect(lazy['Check']!.requestDeserialize(bytes)).toEqual({ service: 'x' });
    expect(lazy['Watch']!.responseDeserialize!(lazy['Watch']!.responseSerialize({ status: 'SERVING' }))).toEqual({ status: 'SERVING' });
    expect(loads).toBe(1);
  });

  it('a method its .proto lacks fails its call, naming it', () => {
    const lazy = lazyProtoService('demo.Svc', { Gone: { requestStream: false, responseStream: false } }, () => ({}));
    expect(() => lazy['Gone']!.requestDeserialize(Buffer.alloc(0))).toThrow('the .proto of demo.Svc does not define Gone');
  });
});
