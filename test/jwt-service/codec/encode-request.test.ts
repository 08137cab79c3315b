/**
 * The request encoders, the client's side: their tables are proto/jwt.proto's messages field
 * for field; every request they write decodes, with proto-loader's own deserializer and with
 * the server's decoders, to what was meant (random messages, defaults, unicode, int64 edges);
 * and a value protobufjs would coerce is refused as INVALID_ARGUMENT naming the field.
 */
import { describe, expect, it } from 'vitest';
import { decodeGenerateJwtRequest, decodeRevokeJwtRequest } from '../../../src/jwt-service/codec/decode.js';
import {
  REQUEST_MESSAGES,
  encodeGenerateJwtRequest,
  encodeGetJwksRequest,
  encodeGetStatusListRequest,
  encodeRevokeJwtRequest,
  encodeVerifyJwtRequest,
} from '../../../src/jwt-service/codec/encode-request.js';
import { GrpcStatus } from '../../../src/contracts/handler-api.js';
import {
  SAMPLE_INT64,
  SAMPLE_STRINGS,
  generateJwt,
  getJwks,
  getStatusList,
  protoFields,
  randomInt64,
  randomString,
  revokeJwt,
  rng,
  serviceMessages,
  verifyJwt,
} from './proto-loader.js';

const refused = (details: string) => expect.objectContaining({ status: GrpcStatus.INVALID_ARGUMENT, details });

describe('the request tables', () => {
  it("are the .proto's request messages, field for field, and every one the service takes", () => {
    expect(Object.keys(REQUEST_MESSAGES).sort()).toEqual(serviceMessages('requestType'));
    for (const [message, spec] of Object.entries(REQUEST_MESSAGES)) {
      expect(spec.name).toBe(message);
      expect(spec.fields.map(([number, name, type]) => [number, name, type])).toEqual(protoFields(message));
    }
  });
});

describe('requests decode with proto-loader, and with the server, to what was meant', () => {
  it('GenerateJwtRequest: 2,000 random requests, unicode and long strings included', () => {
    const next = rng(11);
    for (let i = 0; i < 2000; i++) {
      const request = {
        algorithm: randomString(next),
        subject: randomString(next),
        audience: randomString(next),
        ttl_seconds: randomInt64(next),
        claims_json: randomString(next),
      };
      const bytes = encodeGenerateJwtRequest(request);
      expect(generateJwt.requestDeserialize(bytes)).toEqual(request);
      expect(decodeGenerateJwtRequest(bytes)).toEqual(request);
    }
  });

  it('a field left out, undefined or null is its default and is not written; so is a default', () => {
    expect(encodeGenerateJwtRequest({}).length).toBe(0);
    expect(encodeGenerateJwtRequest({ algorithm: '', ttl_seconds: 0, subject: undefined, audience: null as never }).length).toBe(0);
    const bytes = encodeGenerateJwtRequest({ subject: 'ada' });
    expect(bytes.toString('hex')).toBe(`1203${Buffer.from('ada').toString('hex')}`);
    expect(generateJwt.requestDeserialize(bytes)).toEqual({ algorithm: '', subject: 'ada', audience: '', ttl_seconds: 0, claims_json: '' });
  });

  it('writes what protobufjs writes for the same request when no field is a default', () => {
    const request = { algorithm: 'ES256', subject: 'ünïcödé 🙂', audience: 'api', ttl_seconds: 7200, claims_json: '{"a":1}' };
    expect(encodeGenerateJwtRequest(request)).toEqual(generateJwt.requestSerialize(request));
  });

  it('int64 fields: every edge, up to -2^63 and the largest double below 2^63, as protobufjs writes them', () => {
    for (const value of [...SAMPLE_INT64, 2 ** 53, 2 ** 60, 2 ** 63 - 1024, -(2 ** 63)]) {
      const bytes = encodeRevokeJwtRequest({ expires_at: value });
      // protobufjs writes a 0 that was given; proto3 leaves it out, as encode-request does.
      if (value !== 0) expect(bytes, String(value)).toEqual(revokeJwt.requestSerialize({ expires_at: value }));
      expect(revokeJwt.requestDeserialize(bytes)).toMatchObject({ expires_at: value });
      expect(decodeRevokeJwtRequest(bytes)).toMatchObject({ expires_at: value });
    }
  });

  it('VerifyJwtRequest, GetStatusListRequest, RevokeJwtRequest: random requests; GetJwksRequest: empty', () => {
    const next = rng(12);
    for (let i = 0; i < 500; i++) {
      const verify = { jwt: randomString(next), audience: randomString(next), issuer: randomString(next) };
      expect(verifyJwt.requestDeserialize(encodeVerifyJwtRequest(verify))).toEqual(verify);
      const list = { uri: randomString(next) };
      expect(getStatusList.requestDeserialize(encodeGetStatusListRequest(list))).toEqual(list);
      const revoke = { jwt: randomString(next), jti: randomString(next), expires_at: randomInt64(next), reason: randomString(next) };
      expect(revokeJwt.requestDeserialize(encodeRevokeJwtRequest(revoke))).toEqual(revoke);
    }
    expect(encodeGetJwksRequest({}).length).toBe(0);
    expect(getJwks.requestDeserialize(encodeGetJwksRequest({}))).toEqual({});
  });

  it('refuses a property the message does not have, naming it, its nearest field and the fields (protobufjs would drop it)', () => {
    expect(() => encodeGenerateJwtRequest({ subject: 'ada', sub: 'typo' } as never)).toThrow(
      refused('GenerateJwtRequest: has no field "sub"; its fields: algorithm, subject, audience, ttl_seconds, claims_json'),
    );
    expect(() => encodeGenerateJwtRequest({ subjet: 'ada' } as never)).toThrow(/has no field "subjet" \(did you mean subject\?\)/);
    expect(() => encodeGenerateJwtRequest({ ttlSeconds: 60 } as never)).toThrow(/has no field "ttlSeconds" \(did you mean ttl_seconds\?\)/);
    expect(() => encodeGetJwksRequest({ all: true } as never)).toThrow(refused('GetJwksRequest: has no field "all"; it has none'));
    // Inherited and non-enumerable properties are read too, so they are checked too.
    expect(() => encodeGenerateJwtRequest(Object.create({ subjet: 'ada' }))).toThrow(/has no field "subjet" \(did you mean subject\?\)/);
    expect(() => encodeGenerateJwtRequest(Object.defineProperty({ subject: 'ada' }, 'sub', { value: 'x' }))).toThrow(/has no field "sub"/);
  });
});

describe('a value protobufjs would coerce is refused, naming the message and the field', () => {
  it.each([
    ['a number for a string', { subject: 42 }, 'GenerateJwtRequest.subject: must be a string, got 42'],
    [
      'an object for a string (never shown: it may hold a secret)',
      { claims_json: { secret: 'x' } },
      'GenerateJwtRequest.claims_json: must be a string, got object',
    ],
    ['a string for an int64', { ttl_seconds: '60' }, 'GenerateJwtRequest.ttl_seconds: must be an integer of the int64 range, got string'],
    ['a fraction', { ttl_seconds: 1.5 }, 'GenerateJwtRequest.ttl_seconds: must be an integer of the int64 range, got 1.5'],
    [
      'NaN (protobufjs sends 0: the server default)',
      { ttl_seconds: NaN },
      'GenerateJwtRequest.ttl_seconds: must be an integer of the int64 range, got NaN',
    ],
    ['2^63', { ttl_seconds: 2 ** 63 }, 'GenerateJwtRequest.ttl_seconds: must be an integer of the int64 range, got 9223372036854776000'],
    ['a bigint', { ttl_seconds: 60n }, 'GenerateJwtRequest.ttl_seconds: must be an integer of the int64 range, got bigint'],
    ['a lone surrogate', { subject: 'a\ud800b' }, 'GenerateJwtRequest.subject: holds a lone surrogate, which has no UTF-8 form'],
    [
      'a lone low surrogate in a long string',
      { claims_json: `${'x'.repeat(100)}\udc00` },
      'GenerateJwtRequest.claims_json: holds a lone surrogate, which has no UTF-8 form',
    ],
  ])('%s', (_name, request, details) => {
    expect(() => encodeGenerateJwtRequest(request as never)).toThrow(refused(details));
  });

  it('a request that is not an object', () => {
    expect(() => encodeVerifyJwtRequest(undefined as never)).toThrow(refused('VerifyJwtRequest: must be an object, got undefined'));
    expect(() => encodeGetJwksRequest(null as never)).toThrow(refused('GetJwksRequest: must be an object, got null'));
    expect(() => encodeRevokeJwtRequest('a.b.c' as never)).toThrow(refused('RevokeJwtRequest: must be an object, got string'));
  });

  it('each message checks its own fields', () => {
    expect(() => encodeVerifyJwtRequest({ jwt: 1 } as never)).toThrow(refused('VerifyJwtRequest.jwt: must be a string, got 1'));
    expect(() => encodeGetStatusListRequest({ uri: true } as never)).toThrow(
      refused('GetStatusListRequest.uri: must be a string, got boolean'),
    );
    expect(() => encodeRevokeJwtRequest({ expires_at: '1767225600' } as never)).toThrow(
      refused('RevokeJwtRequest.expires_at: must be an integer of the int64 range, got string'),
    );
  });

  it('a U+FFFD or a surrogate pair is well-formed and sent', () => {
    for (const subject of ['\ufffd', '🙂', ...SAMPLE_STRINGS])
      expect(generateJwt.requestDeserialize(encodeGenerateJwtRequest({ subject }))).toMatchObject({ subject });
  });
});
