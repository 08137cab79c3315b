/**
 * The hand-written codecs (src/jwt-service/codec/) against proto-loader's, which a client
 * built from proto/jwt.proto uses: every request proto-loader encodes decodes to the
 * object proto-loader itself would produce, and every response we encode decodes with
 * proto-loader to what we meant. Random messages, edge values, unknown fields, merged
 * messages and truncations; then a malformed request over a real connection, on each
 * transport.
 */
import { isUtf8 } from 'node:buffer';
import { Client, type ServiceError, Metadata, credentials, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decodeExchangeTokenRequest,
  decodeGenerateJwtRequest,
  decodeGetJwksRequest,
  decodeGetStatusListRequest,
  decodeRevokeJwtRequest,
  decodeVerifyJwtRequest,
} from '../../src/jwt-service/codec/decode.js';
import {
  REASON_NUMBERS,
  encodeExchangeTokenResponse,
  encodeGenerateJwtResponse,
  encodeGetJwksResponse,
  encodeGetStatusListResponse,
  encodeRevokeJwtResponse,
  encodeVerifyJwtResponse,
} from '../../src/jwt-service/codec/encode.js';
import { SERVICE_NAME } from '../../src/jwt-service/definition.js';
import type { VerifyJwtReason } from '../../src/jwt-service/messages.js';
import { TRANSPORTS, closeAllServers, sharedKeys, startServer } from '../../bench/kit/jwt-servers.js';
import { GrpcStatusError, GrpcStatus } from '../../src/contracts/handler-api.js';
import {
  SAMPLE_INT64,
  definition,
  exchangeToken,
  generateJwt,
  getJwks,
  getStatusList,
  randomInt64,
  randomString,
  revokeJwt,
  rng,
  unknownField,
  varint,
  verifyJwt,
} from './codec/proto-loader.js';

function randomGenerateRequest(next: () => number): Record<string, unknown> {
  return {
    algorithm: randomString(next),
    subject: randomString(next),
    audience: randomString(next),
    ttl_seconds: randomInt64(next),
    claims_json: randomString(next),
  };
}

describe('request decoders agree with proto-loader', () => {
  it('GenerateJwtRequest: 2,000 random messages, with unknown fields mixed in and messages merged', () => {
    const next = rng(1);
    for (let i = 0; i < 2000; i++) {
      let buf = generateJwt.requestSerialize(randomGenerateRequest(next));
      if (i % 3 === 1) buf = Buffer.concat([unknownField(next), buf, unknownField(next)]);
      // Concatenated messages merge: for scalar fields the last value wins.
      if (i % 5 === 2) buf = Buffer.concat([buf, generateJwt.requestSerialize(randomGenerateRequest(next))]);
      expect(decodeGenerateJwtRequest(buf)).toEqual(generateJwt.requestDeserialize(buf));
    }
  });

  it('GenerateJwtRequest: every int64 edge value of ttl_seconds, including 10-byte negatives', () => {
    for (const ttl of [...SAMPLE_INT64, '9223372036854775807', '-9223372036854775808']) {
      const buf = generateJwt.requestSerialize({ algorithm: 'HS256', ttl_seconds: ttl });
      expect(decodeGenerateJwtRequest(buf)).toEqual(generateJwt.requestDeserialize(buf));
    }
    expect(decodeGenerateJwtRequest(generateJwt.requestSerialize({ ttl_seconds: -1 }))).toMatchObject({ ttl_seconds: -1 });
  });

  it('VerifyJwtRequest and GetJwksRequest: random messages with unknown fields', () => {
    const next = rng(2);
    for (let i = 0; i < 1000; i++) {
      let buf = verifyJwt.requestSerialize({ jwt: randomString(next), audience: randomString(next), issuer: randomString(next) });
      if (i % 2 === 1) buf = Buffer.concat([buf, unknownField(next)]);
      expect(decodeVerifyJwtRequest(buf)).toEqual(verifyJwt.requestDeserialize(buf));
      const jwks = Buffer.concat([unknownField(next), unknownField(next)]);
      expect(decodeGetJwksRequest(jwks)).toEqual(getJwks.requestDeserialize(jwks));
    }
  });

  it('GetStatusListRequest: random messages with unknown fields, and the empty one', () => {
    const next = rng(3);
    for (let i = 0; i < 500; i++) {
      let buf = getStatusList.requestSerialize({ uri: randomString(next) });
      if (i % 2 === 1) buf = Buffer.concat([unknownField(next), buf]);
      expect(decodeGetStatusListRequest(buf)).toEqual(getStatusList.requestDeserialize(buf));
    }
    expect(decodeGetStatusListRequest(Buffer.alloc(0))).toEqual({ uri: '' });
  });

  it('RevokeJwtRequest: random messages with unknown fields, and every int64 edge of expires_at', () => {
    const next = rng(5);
    for (let i = 0; i < 1000; i++) {
      const request = { jwt: randomString(next), jti: randomString(next), expires_at: randomInt64(next), reason: randomString(next) };
      let buf = revokeJwt.requestSerialize(request);
      if (i % 2 === 1) buf = Buffer.concat([unknownField(next), buf]);
      expect(decodeRevokeJwtRequest(buf)).toEqual(revokeJwt.requestDeserialize(buf));
    }
    expect(decodeRevokeJwtRequest(Buffer.alloc(0))).toEqual({ jwt: '', jti: '', expires_at: 0, reason: '' });
  });

  it('ExchangeTokenRequest: random messages of its eight strings, with unknown fields mixed in', () => {
    const next = rng(11);
    const names = [
      'subject_token',
      'subject_token_type',
      'actor_token',
      'actor_token_type',
      'audience',
      'resource',
      'scope',
      'requested_token_type',
    ];
    for (let i = 0; i < 1000; i++) {
      let buf = exchangeToken.requestSerialize(Object.fromEntries(names.map((name) => [name, randomString(next)])));
      // Fields 6 to 8 are known here: the unknown ones are numbered past them.
      if (i % 2 === 1) buf = Buffer.concat([varint(BigInt((9 + Math.floor(next() * 2000)) * 8)), varint(BigInt(i)), buf]);
      expect(decodeExchangeTokenRequest(buf)).toEqual(exchangeToken.requestDeserialize(buf));
    }
    expect(decodeExchangeTokenRequest(Buffer.alloc(0))).toEqual(Object.fromEntries(names.map((name) => [name, ''])));
  });

  it('an empty message is all defaults, as proto3 means it', () => {
    const empty = Buffer.alloc(0);
    expect(decodeGenerateJwtRequest(empty)).toEqual({ algorithm: '', subject: '', audience: '', ttl_seconds: 0, claims_json: '' });
    expect(decodeGenerateJwtRequest(empty)).toEqual(generateJwt.requestDeserialize(empty));
    expect(decodeVerifyJwtRequest(empty)).toEqual(verifyJwt.requestDeserialize(empty));
  });
});

/** What a decoder throws for `buf`: a GrpcStatusError, or the test fails. */
function decodeFailure(buf: Buffer): GrpcStatusError {
  try {
    decodeGenerateJwtRequest(buf);
  } catch (err) {
    if (err instanceof GrpcStatusError) return err;
    throw err;
  }
  throw new Error('decoded without an error');
}

describe('malformed requests throw INVALID_ARGUMENT naming the problem, never another error', () => {
  it('a message cut anywhere but between two fields is refused; cut between fields it decodes as proto-loader does', () => {
    const fields = [{ algorithm: 'ES256' }, { subject: 'ada@example.com' }, { ttl_seconds: -5 }, { claims_json: '{"a":1}' }];
    const parts = fields.map((field) => generateJwt.requestSerialize(field));
    const whole = Buffer.concat(parts);
    const boundaries = new Set(parts.map((_, i) => Buffer.concat(parts.slice(0, i)).length));
    for (let length = 0; length < whole.length; length++) {
      const cut = whole.subarray(0, length);
      if (boundaries.has(length)) {
        expect(decodeGenerateJwtRequest(cut), `cut at ${length}`).toEqual(generateJwt.requestDeserialize(cut));
      } else {
        // protobufjs reads a cut string as the bytes that are there; a cut varint throws.
        const failure = decodeFailure(cut);
        expect(failure.status, `cut at ${length}`).toBe(GrpcStatus.INVALID_ARGUMENT);
        expect(failure.details).toMatch(/^GenerateJwtRequest: truncated/);
      }
    }
  });

  it.each([
    ['a known field with the wrong wire type', Buffer.from([0x08, 0x01]), /field 1 \(algorithm\) has wire type 0/],
    ['ttl_seconds sent as a string', Buffer.from([0x22, 0x01, 0x41]), /field 4 \(ttl_seconds\) has wire type 2/],
    ['field number 0', Buffer.from([0x02, 0x00]), /field number 0/],
    ['wire type 6', Buffer.from([0x36]), /invalid wire type 6/],
    ['a lone end-group', Buffer.from([0x34]), /invalid wire type 4/],
    ['an unclosed group', Buffer.from([0x33, 0x08, 0x01]), /group 6 is not closed/],
    ['a length past the end', Buffer.from([0x0a, 0x05, 0x41]), /truncated/],
    ['an 11-byte varint', Buffer.from([0x20, ...Array(10).fill(0xff), 0x01]), /longer than 10 bytes/],
    ['a tag over 32 bits', Buffer.from([0xff, 0xff, 0xff, 0xff, 0x7f]), /exceeds 32 bits/],
  ])('%s', (_, buf, message) => {
    const failure = decodeFailure(buf);
    expect(failure.status).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(failure.details).toMatch(message);
  });
});

/** `count` groups of field 6 nested in one another, each closed by its own end tag. */
function nestedGroups(count: number): Buffer {
  return Buffer.concat([Buffer.alloc(count, 0x33), Buffer.alloc(count, 0x34)]);
}

/** A length-delimited field `field` holding `bytes` as they are. */
function rawField(field: number, bytes: Buffer): Buffer {
  return Buffer.concat([varint(BigInt(field * 8 + 2)), varint(BigInt(bytes.length)), bytes]);
}

/** Byte sequences that are not UTF-8: a stray continuation byte, a cut sequence, an overlong '/', an encoded surrogate, a code point past U+10FFFF. */
const INVALID_UTF8 = [[0x80], [0xe6, 0x97], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xff]].map((bytes) =>
  Buffer.concat([Buffer.from('ok'), Buffer.from(bytes), Buffer.from('ok')]),
);

describe('string fields must be valid UTF-8 (proto3), never decoded into U+FFFD', () => {
  const decoders: [string, (buf: Buffer) => unknown, string[]][] = [
    ['GenerateJwtRequest', decodeGenerateJwtRequest, ['algorithm', 'subject', 'audience', '', 'claims_json']],
    ['VerifyJwtRequest', decodeVerifyJwtRequest, ['jwt', 'audience', 'issuer']],
    ['GetStatusListRequest', decodeGetStatusListRequest, ['uri']],
    ['RevokeJwtRequest', decodeRevokeJwtRequest, ['jwt', 'jti', '', 'reason']],
  ];

  it.each(decoders)('%s: every string field with each invalid sequence is INVALID_ARGUMENT naming it', (message, decode, fields) => {
    fields.forEach((name, index) => {
      if (name === '') return;
      for (const bytes of INVALID_UTF8) {
        let thrown: unknown;
        try {
          decode(rawField(index + 1, bytes));
        } catch (err) {
          thrown = err;
        }
        expect(thrown, `${name} ${bytes.toString('hex')}`).toBeInstanceOf(GrpcStatusError);
        expect((thrown as GrpcStatusError).status).toBe(GrpcStatus.INVALID_ARGUMENT);
        expect((thrown as GrpcStatusError).details).toBe(`${message}: ${name} is not valid UTF-8`);
      }
    });
  });

  it('a U+FFFD sent as its own bytes is valid and kept', () => {
    expect(decodeGenerateJwtRequest(rawField(2, Buffer.from('a\ufffdb')))).toMatchObject({ subject: 'a\ufffdb' });
  });

  it('5,000 random byte strings: a subject decodes exactly when its bytes are UTF-8, and then as proto-loader decodes it', () => {
    const next = rng(6);
    for (let i = 0; i < 5000; i++) {
      // Mostly text with a few random bytes, so valid and invalid both come up often.
      const text = Buffer.from(randomString(next).slice(0, 20));
      const bytes = Buffer.from(Array.from(text, (byte) => (next() < 0.05 ? Math.floor(next() * 256) : byte)));
      const buf = rawField(2, bytes);
      if (isUtf8(bytes)) expect(decodeGenerateJwtRequest(buf)).toEqual(generateJwt.requestDeserialize(buf));
      else expect(decodeFailure(buf).details, bytes.toString('hex')).toBe('GenerateJwtRequest: subject is not valid UTF-8');
    }
  });
});

describe('unknown groups are skipped without recursion, nested at most 100 deep', () => {
  it('100 nested groups decode as proto-loader does', () => {
    const buf = Buffer.concat([nestedGroups(100), generateJwt.requestSerialize({ algorithm: 'HS256', subject: 'deep' })]);
    expect(decodeGenerateJwtRequest(buf)).toEqual(generateJwt.requestDeserialize(buf));
  });

  it.each([101, 20_000])('%i nested groups are INVALID_ARGUMENT naming the depth, not a stack overflow', (count) => {
    const failure = decodeFailure(nestedGroups(count));
    expect(failure.status).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(failure.details).toBe('GenerateJwtRequest: groups nested deeper than 100');
  });

  it('a nested group closed by the wrong end tag is refused', () => {
    expect(decodeFailure(Buffer.from([0x33, 0x3b, 0x34, 0x34])).details).toBe('GenerateJwtRequest: group 7 closed by 6');
  });
});

describe('response encoders decode with proto-loader to what was meant', () => {
  it('GenerateJwtResponse: 2,000 random responses and the int64 edges of expires_at', () => {
    const next = rng(3);
    const cases = [
      ...Array.from({ length: 2000 }, () => ({
        jwt: randomString(next),
        sub: randomString(next),
        kid: randomString(next),
        expires_at: randomInt64(next),
      })),
      ...SAMPLE_INT64.map((expires_at) => ({ jwt: 'a.b.c', sub: 's', kid: 'k', expires_at })),
    ];
    for (const response of cases) {
      const ours = encodeGenerateJwtResponse(response);
      expect(generateJwt.responseDeserialize(ours)).toEqual(response);
      // Same bytes as protobufjs wherever it, too, leaves the defaults out.
      if (response.jwt && response.sub && response.kid && response.expires_at)
        expect(ours).toEqual(generateJwt.responseSerialize(response));
    }
  });

  it('VerifyJwtResponse: every reason, valid or not, with and without claims', () => {
    const next = rng(4);
    for (const reason of Object.keys(REASON_NUMBERS) as VerifyJwtReason[]) {
      for (const valid of [true, false]) {
        const response = { valid, sub: randomString(next), claims_json: randomString(next), reason };
        expect(verifyJwt.responseDeserialize(encodeVerifyJwtResponse(response))).toEqual(response);
      }
    }
    expect(() => encodeVerifyJwtResponse({ valid: false, sub: '', claims_json: '', reason: 'NOPE' as VerifyJwtReason })).toThrow(
      /reason: unknown value "NOPE"/,
    );
  });

  it("the Reason table is the proto's enum, name for name and number for number", () => {
    const message = definition['jwt.services.VerifyJwtResponse'] as unknown as {
      type: { enumType: { name: string; value: { name: string; number: number }[] }[] };
    };
    const reason = message.type.enumType.find((e) => e.name === 'Reason');
    const fromProto = Object.fromEntries((reason?.value ?? []).map((v) => [v.name, v.number]));
    expect(REASON_NUMBERS).toEqual(fromProto);
  });

  it('a lone surrogate (JSON.parse makes one of "\\ud800") is sent as U+FFFD: the wire only carries valid UTF-8', () => {
    const response = { jwt: 'a.b.c', sub: 'x\ud800y', kid: 'k', expires_at: 1 };
    expect(generateJwt.responseDeserialize(encodeGenerateJwtResponse(response))).toEqual({ ...response, sub: 'x\ufffdy' });
  });

  it('GetStatusListResponse: empty and large tokens', () => {
    for (const token of ['', 'a.b.c', `h.${'x'.repeat(200_000)}.s`]) {
      expect(getStatusList.responseDeserialize(encodeGetStatusListResponse({ token }))).toEqual({ token });
    }
  });

  it('ExchangeTokenResponse: the int64 edges of expires_in, with and without a scope', () => {
    for (const expires_in of SAMPLE_INT64) {
      for (const scope of ['', 'invoices:read profile']) {
        const response = {
          access_token: 'h.p.s',
          issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
          token_type: 'Bearer',
          expires_in,
          scope,
        };
        expect(exchangeToken.responseDeserialize(encodeExchangeTokenResponse(response))).toEqual(response);
      }
    }
  });

  it('RevokeJwtResponse: the int64 edges of expires_at, revoked or not', () => {
    for (const expires_at of SAMPLE_INT64) {
      for (const revoked of [true, false])
        expect(revokeJwt.responseDeserialize(encodeRevokeJwtResponse({ revoked, expires_at }))).toEqual({ revoked, expires_at });
    }
  });

  it('GetJwksResponse: empty and large JWK Sets', () => {
    for (const jwks_json of [
      '',
      '{"keys":[]}',
      JSON.stringify({ keys: Array.from({ length: 50 }, (_, i) => ({ kid: `k${i}`, x: 'a'.repeat(43) })) }),
    ]) {
      expect(getJwks.responseDeserialize(encodeGetJwksResponse({ jwks_json }))).toEqual({ jwks_json });
    }
  });
});

describe.each(TRANSPORTS)('over a real connection, on transport %s', (transport) => {
  let port: number;
  let raw: Client;

  beforeAll(async () => {
    ({ port } = await startServer({ transport, keys: await sharedKeys() }));
    // A bare client: send() puts bytes on the wire as they are, malformed ones included.
    raw = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  });

  afterAll(async () => {
    raw?.close();
    await closeAllServers();
  });

  const send = (buf: Buffer): Promise<{ err: ServiceError | null; res?: Buffer }> =>
    new Promise((resolve) => {
      const identity = (b: Buffer): Buffer => b;
      raw.makeUnaryRequest(
        `/${SERVICE_NAME}/GenerateJwt`,
        identity,
        identity,
        buf,
        new Metadata(),
        { deadline: Date.now() + 10_000 },
        (err, res) => resolve({ err, res }),
      );
    });

  it('a malformed GenerateJwtRequest is INVALID_ARGUMENT naming the field, and the next call on the connection works', async () => {
    const bad = await send(Buffer.from([0x22, 0x01, 0x41]));
    expect(bad.err?.code).toBe(status.INVALID_ARGUMENT);
    expect(bad.err?.details).toBe('GenerateJwtRequest: field 4 (ttl_seconds) has wire type 2, expected 0');
    const good = await send(generateJwt.requestSerialize({ algorithm: 'HS256', subject: 'raw@example.com' }));
    expect(good.err).toBeNull();
    expect(generateJwt.responseDeserialize(good.res as Buffer)).toMatchObject({ sub: 'raw@example.com', kid: expect.any(String) });
  });
});
