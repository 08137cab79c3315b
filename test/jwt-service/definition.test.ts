/**
 * JwtService's definition: the six method paths, and a descriptor whose codecs on both sides
 * round-trip. test/server/lazy-protos.test.ts holds the method table against the .proto;
 * test/client/jwt-client.test.ts holds that a call decodes with this package's own codecs.
 */
import { describe, expect, it } from 'vitest';
import { JWT_SERVICE_METHODS, JWT_SERVICE_METHOD_SHAPES, jwtServiceDefinition } from '../../src/jwt-service/definition.js';

describe('JwtService definition', () => {
  it('lists the six unary methods by full path', () => {
    expect(JWT_SERVICE_METHODS).toEqual([
      '/jwt.services.JwtService/GenerateJwt',
      '/jwt.services.JwtService/VerifyJwt',
      '/jwt.services.JwtService/GetJwks',
      '/jwt.services.JwtService/GetStatusList',
      '/jwt.services.JwtService/RevokeJwt',
      '/jwt.services.JwtService/ExchangeToken',
    ]);
    expect(Object.isFrozen(JWT_SERVICE_METHODS)).toBe(true);
    for (const shape of Object.values(JWT_SERVICE_METHOD_SHAPES)) expect(shape).toEqual({ requestStream: false, responseStream: false });
  });

  it("serves and calls with this package's codecs, which round-trip with each other", () => {
    const generate = jwtServiceDefinition()['GenerateJwt'];
    const request = { algorithm: 'ES256', subject: 'ada', audience: '', ttl_seconds: 60, claims_json: '' };
    expect(generate?.requestDeserialize?.(generate?.requestSerialize?.(request) as Buffer)).toEqual(request);
    const response = { jwt: 'a.b.c', sub: 'ada', kid: 'k', expires_at: 99 };
    expect(generate?.responseDeserialize?.(generate?.responseSerialize?.(response) as Buffer)).toEqual(response);
  });
});
