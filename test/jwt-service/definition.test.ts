/**
 * JwtService's definition: the six method paths, and a descriptor whose codecs on both sides
 * are this package's own (not proto-loader's), built once. test/server/lazy-protos.test.ts
 * holds the method table against the .proto.
 */
import { describe, expect, it } from 'vitest';
import { decodeGenerateJwtRequest, decodeRevokeJwtRequest } from '../../src/jwt-service/codec/decode.js';
import { decodeGenerateJwtResponse, decodeVerifyJwtResponse } from '../../src/jwt-service/codec/decode-response.js';
import { encodeGenerateJwtResponse, encodeVerifyJwtResponse } from '../../src/jwt-service/codec/encode.js';
import { encodeGenerateJwtRequest, encodeRevokeJwtRequest } from '../../src/jwt-service/codec/encode-request.js';
import { JWT_SERVICE_METHODS, JWT_SERVICE_METHOD_SHAPES, SERVICE_NAME, jwtServiceDefinition } from '../../src/jwt-service/definition.js';

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

  it("serves with this package's codecs, and is built once", () => {
    const service = jwtServiceDefinition();
    expect(service['GenerateJwt']?.requestDeserialize).toBe(decodeGenerateJwtRequest);
    expect(service['GenerateJwt']?.responseSerialize).toBe(encodeGenerateJwtResponse);
    expect(service['VerifyJwt']?.responseSerialize).toBe(encodeVerifyJwtResponse);
    expect(service['RevokeJwt']?.requestDeserialize).toBe(decodeRevokeJwtRequest);
    expect(service['GetJwks']?.path).toBe(`/${SERVICE_NAME}/GetJwks`);
    expect(jwtServiceDefinition()).toBe(service);
  });

  it("serves a client with this package's codecs too, which round-trip with the server's", () => {
    const service = jwtServiceDefinition();
    const generate = service['GenerateJwt'];
    expect(generate?.requestSerialize).toBe(encodeGenerateJwtRequest);
    expect(generate?.responseDeserialize).toBe(decodeGenerateJwtResponse);
    expect(service['VerifyJwt']?.responseDeserialize).toBe(decodeVerifyJwtResponse);
    expect(service['RevokeJwt']?.requestSerialize).toBe(encodeRevokeJwtRequest);
    const bytes = generate?.requestSerialize?.({ algorithm: 'ES256', subject: 'ada', ttl_seconds: 60 }) as Buffer;
    expect(decodeGenerateJwtRequest(bytes)).toEqual({ algorithm: 'ES256', subject: 'ada', audience: '', ttl_seconds: 60, claims_json: '' });
    const response = { jwt: 'a.b.c', sub: 'ada', kid: 'k', expires_at: 99 };
    expect(generate?.responseDeserialize?.(encodeGenerateJwtResponse(response))).toEqual(response);
  });
});
