/**
 * The client's table of JwtService methods: each has the served path and codecs that round-trip
 * a message; the table is built once.
 */
import { describe, expect, it } from 'vitest';
import { jwtServiceMethods } from '../../src/client/proto.js';
import { SERVICE_NAME } from '../../src/jwt-service/definition.js';

describe('jwtServiceMethods', () => {
  it('lists the five methods under the service path, built once', () => {
    const methods = jwtServiceMethods();
    expect(Object.keys(methods)).toEqual(['GenerateJwt', 'VerifyJwt', 'GetJwks', 'GetStatusList', 'RevokeJwt']);
    for (const [name, method] of Object.entries(methods)) expect(method.path).toBe(`/${SERVICE_NAME}/${name}`);
    expect(jwtServiceMethods()).toBe(methods);
  });

  it('serializes requests to bytes and decodes responses', () => {
    const { GenerateJwt, GetJwks } = jwtServiceMethods();
    const bytes = GenerateJwt.serialize({ algorithm: 'ES256', subject: 'ada', ttl_seconds: 60 });
    expect(Buffer.isBuffer(bytes)).toBe(true);
    expect(bytes.includes(Buffer.from('ada'))).toBe(true);
    expect(GetJwks.deserialize(Buffer.alloc(0))).toEqual({ jwks_json: '' });
  });
});
