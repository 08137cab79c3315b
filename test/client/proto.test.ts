/**
 * The client's table of JwtService methods: each has the served path and this package's
 * client-side codecs (test/jwt-service/codec/ holds them to proto-loader's); the table is
 * built once.
 */
import { describe, expect, it } from 'vitest';
import { jwtServiceMethods } from '../../src/client/proto.js';
import { SERVICE_NAME } from '../../src/jwt-service/definition.js';
import {
  decodeGenerateJwtResponse,
  decodeGetJwksResponse,
  decodeGetStatusListResponse,
  decodeRevokeJwtResponse,
  decodeVerifyJwtResponse,
} from '../../src/jwt-service/codec/decode-response.js';
import {
  encodeGenerateJwtRequest,
  encodeGetJwksRequest,
  encodeGetStatusListRequest,
  encodeRevokeJwtRequest,
  encodeVerifyJwtRequest,
} from '../../src/jwt-service/codec/encode-request.js';

describe('jwtServiceMethods', () => {
  it('lists the six methods under the service path, built once', () => {
    const methods = jwtServiceMethods();
    expect(Object.keys(methods)).toEqual(['GenerateJwt', 'VerifyJwt', 'GetJwks', 'GetStatusList', 'RevokeJwt', 'ExchangeToken']);
    for (const [name, method] of Object.entries(methods)) expect(method.path).toBe(`/${SERVICE_NAME}/${name}`);
    expect(jwtServiceMethods()).toBe(methods);
  });

  it("uses this package's request encoders and response decoders, not proto-loader's", () => {
    const methods = jwtServiceMethods();
    expect([methods.GenerateJwt.serialize, methods.GenerateJwt.deserialize]).toEqual([encodeGenerateJwtRequest, decodeGenerateJwtResponse]);
    expect([methods.VerifyJwt.serialize, methods.VerifyJwt.deserialize]).toEqual([encodeVerifyJwtRequest, decodeVerifyJwtResponse]);
    expect([methods.GetJwks.serialize, methods.GetJwks.deserialize]).toEqual([encodeGetJwksRequest, decodeGetJwksResponse]);
    expect([methods.GetStatusList.serialize, methods.GetStatusList.deserialize]).toEqual([
      encodeGetStatusListRequest,
      decodeGetStatusListResponse,
    ]);
    expect([methods.RevokeJwt.serialize, methods.RevokeJwt.deserialize]).toEqual([encodeRevokeJwtRequest, decodeRevokeJwtResponse]);
  });

  it('serializes requests to bytes and decodes responses', () => {
    const { GenerateJwt, GetJwks } = jwtServiceMethods();
    const bytes = GenerateJwt.serialize({ algorithm: 'ES256', subject: 'ada', ttl_seconds: 60 });
    expect(Buffer.isBuffer(bytes)).toBe(true);
    expect(bytes.includes(Buffer.from('ada'))).toBe(true);
    expect(GetJwks.deserialize(Buffer.alloc(0))).toEqual({ jwks_json: '' });
  });
});
