/**
 * Hostile and malformed requests over the wire: each is refused with the right status
 * and a message naming the field, and the same client's next good call still works, on
 * each transport.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { Client, Metadata, credentials, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KeySet, importKeys } from '../../src/lib/index.js';
import { ClientPool, type JwtClient, callError, decodeJwt, statusName } from '../../bench/kit/grpc-clients.js';
import { TRANSPORTS, closeAllServers, nowSeconds, sharedKeys, signHs256, startServer } from '../../bench/kit/jwt-servers.js';

const GENERATE_JWT = '/jwt.services.JwtService/GenerateJwt';

describe.each(TRANSPORTS)('on transport %s', (transport) => {
  const clients = new ClientPool();
  let keys: KeySet;
  let client: JwtClient;
  let port: number;

  beforeAll(async () => {
    keys = await sharedKeys();
    ({ port } = await startServer({ transport, keys }));
    // Large enough to send the oversized messages; the server's own limit must refuse them.
    client = clients.jwt(port, { channelOptions: { 'grpc.max_send_message_length': -1 } });
  });

  afterAll(async () => {
    clients.closeAll();
    await closeAllServers();
  });

  /** A good GenerateJwt on the same client: the bad call left nothing broken. */
  async function expectStillServing(c: JwtClient = client): Promise<void> {
    const res = await c.generateJwt({ algorithm: 'HS256', subject: 'after@example.com' });
    expect(res.sub).toBe('after@example.com');
    expect((await c.verifyJwt({ jwt: res.jwt })).valid).toBe(true);
  }

  /** The call fails with `code` (INVALID_ARGUMENT by default) and a message matching `field`, then a good call works. */
  async function expectRefused(call: Promise<unknown>, field: RegExp, code: number = status.INVALID_ARGUMENT): Promise<void> {
    const err = await callError(call);
    expect(statusName(err.code), err.details).toBe(statusName(code));
    expect(err.details).toMatch(field);
    await expectStillServing();
  }

  const generate = (request: Record<string, unknown>): Promise<unknown> => client.generateJwt({ subject: 'bad@example.com', ...request });

  describe('GenerateJwt algorithm', () => {
    it.each([
      ['empty', ''],
      ['unknown', 'FOO'],
      ['lower case', 'hs256'],
      ['padded', ' HS256'],
      ['padded after', 'HS256 '],
      ['none', 'none'],
    ])('refuses an algorithm that is %s', async (_, algorithm) => {
      await expectRefused(generate({ algorithm }), /\balgorithm\b/);
    });

    it('refuses an algorithm whose only key is verify-only', async () => {
      const publicEs256 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
      const verifyOnly = importKeys({
        keys: [
          { kty: 'oct', k: randomBytes(32).toString('base64url'), kid: 'hs-sign', alg: 'HS256' },
          { ...publicEs256, kid: 'es-verify-only', alg: 'ES256' },
        ],
      });
      const c = clients.jwt((await startServer({ transport, keys: verifyOnly })).port);
      const err = await callError(c.generateJwt({ algorithm: 'ES256', subject: 's' }));
      expect(statusName(err.code)).toBe('INVALID_ARGUMENT');
      expect(err.details).toMatch(/\balgorithm\b/);
      expect(err.details).toMatch(/ES256/);
      expect(err.details).toMatch(/configured: HS256$/);
      await expectStillServing(c);
      // The verify-only key is published for verification all the same.
      const jwks = JSON.parse((await c.getJwks()).jwks_json) as { keys: { kid: string }[] };
      expect(jwks.keys.map((key) => key.kid)).toEqual(['es-verify-only']);
    });
  });

  describe('GenerateJwt subject, audience and ttl_seconds', () => {
    it('refuses a 65,536-character subject with RESOURCE_EXHAUSTED (the 64 KiB receive limit comes first)', async () => {
      const err = await callError(generate({ algorithm: 'HS256', subject: 's'.repeat(65_536) }));
      // Either would be a correct refusal; the message limit (65,536 bytes) is hit before the subject limit.
      expect(['INVALID_ARGUMENT', 'RESOURCE_EXHAUSTED']).toContain(statusName(err.code));
      expect(statusName(err.code)).toBe('RESOURCE_EXHAUSTED');
      await expectStillServing();
    });

    it('refuses a subject or audience over 1024 characters with INVALID_ARGUMENT naming it', async () => {
      await expectRefused(generate({ algorithm: 'HS256', subject: 's'.repeat(1025) }), /\bsubject\b/);
      await expectRefused(generate({ algorithm: 'HS256', audience: 'a'.repeat(1025) }), /\baudience\b/);
    });

    it.each([
      ['negative', -1],
      ['huge', Number.MAX_SAFE_INTEGER],
      ['above the maximum ttl', 86_401],
    ])('refuses a %s ttl_seconds', async (_, ttl) => {
      await expectRefused(generate({ algorithm: 'HS256', ttl_seconds: ttl }), /\bttl_seconds\b/);
    });

    it('takes ttl_seconds 0 as the default ttl', async () => {
      const res = await client.generateJwt({ algorithm: 'HS256', subject: 's', ttl_seconds: 0 });
      expect(res.expires_at - (decodeJwt(res.jwt).payload['iat'] as number)).toBe(7200);
    });
  });

  describe('GenerateJwt claims_json', () => {
    it.each([
      ['not JSON', 'not json'],
      ['an array', '[1,2]'],
      ['a string', '"str"'],
      ['null', 'null'],
      ['a number', '42'],
      ['truncated', '{"a":'],
    ])('refuses claims_json that is %s', async (_, claims_json) => {
      await expectRefused(generate({ algorithm: 'HS256', claims_json }), /\bclaims_json\b/);
    });

    it('refuses claims nested 10,000 deep (bounded by size before parsing)', async () => {
      const claims_json = `{"deep":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
      await expectRefused(generate({ algorithm: 'HS256', claims_json }), /\bclaims_json\b/);
    });

    it('refuses claims_json over 4096 bytes with INVALID_ARGUMENT', async () => {
      const claims_json = JSON.stringify({ blob: 'x'.repeat(5000) });
      await expectRefused(generate({ algorithm: 'HS256', claims_json }), /\bclaims_json\b.*4096/);
    });

    it('refuses 1 MiB of claims_json with RESOURCE_EXHAUSTED (the receive limit)', async () => {
      const claims_json = JSON.stringify({ blob: 'x'.repeat(1 << 20) });
      const err = await callError(generate({ algorithm: 'HS256', claims_json }));
      expect(['INVALID_ARGUMENT', 'RESOURCE_EXHAUSTED']).toContain(statusName(err.code));
      expect(statusName(err.code)).toBe('RESOURCE_EXHAUSTED');
      await expectStillServing();
    });

    it.each(['exp', 'iat', 'sub', 'iss', 'nbf', 'aud', 'jti'])('refuses claims_json setting the reserved claim %s', async (claim) => {
      const claims_json = JSON.stringify({ ok: 1, [claim]: claim === 'exp' || claim === 'iat' || claim === 'nbf' ? 1 : 'x' });
      await expectRefused(generate({ algorithm: 'HS256', claims_json }), new RegExp(`\\bclaims_json\\b.*"${claim}"`));
    });

    // Each would be signed as something else: JSON.parse then JSON.stringify changes it.
    it.each([
      ['a number past the double range', '{"n":1e400}', '$.n: number 1e400 does not survive a round trip (it would be signed as null)'],
      [
        '2^64 + 1',
        '{"n":18446744073709551617}',
        '$.n: number 18446744073709551617 does not survive a round trip (it would be signed as 18446744073709552000)',
      ],
      ['negative zero', '{"a":{"z":-0}}', '$.a.z: number -0 is negative zero, which would be signed as 0'],
      [
        'more digits than a double holds',
        '{"n":[1.0000000000000000001]}',
        '$.n[0]: number 1.0000000000000000001 does not survive a round trip (it would be signed as 1)',
      ],
      ['a number that underflows to 0', '{"n":1e-400}', '$.n: number 1e-400 does not survive a round trip (it would be signed as 0)'],
      ['a duplicate key', '{"role":"admin","role":"user"}', '$.role: duplicate key "role"'],
      ['a lone surrogate', '{"s":"\\ud800"}', '$.s: string has a lone surrogate, which UTF-8 cannot carry'],
      ['a key with a lone surrogate', '{"\\udfff":1}', '$["\\udfff"]: key has a lone surrogate, which UTF-8 cannot carry'],
    ])('refuses claims_json with %s, naming its path', async (_, claims_json, problem) => {
      const err = await callError(generate({ algorithm: 'HS256', claims_json }));
      expect(statusName(err.code), err.details).toBe('INVALID_ARGUMENT');
      expect(err.details).toBe(`claims_json: ${problem}`);
      await expectStillServing();
    });

    it('signs claims that survive the round trip exactly as given: decimals, 1e21, 2^53 - 1, nesting, emoji and CJK', async () => {
      const claims_json =
        '{"f":1.5,"big":1e21,"safe":9007199254740991,"neg":-2.5e-7,"zero":0,"o":{"a":[1,{"b":"日本語 😀"}],"t":true,"n":null},"e":"\\ud83d\\ude00"}';
      const res = await client.generateJwt({ algorithm: 'HS256', subject: 's', claims_json });
      const { payload } = decodeJwt(res.jwt);
      expect(payload).toMatchObject(JSON.parse(claims_json) as Record<string, unknown>);
      expect(payload['e']).toBe('😀');
      expect((await client.verifyJwt({ jwt: res.jwt })).valid).toBe(true);
    });

    it('keeps a "__proto__" key as a plain claim', async () => {
      const res = await client.generateJwt({ algorithm: 'HS256', subject: 's', claims_json: '{"__proto__":{"admin":true}}' });
      const { payload } = decodeJwt(res.jwt);
      expect(Object.keys(payload)).toContain('__proto__');
      expect(payload['admin']).toBeUndefined();
    });
  });

  describe('GenerateJwt bytes no client library would send', () => {
    let raw: Client;
    beforeAll(() => {
      // A bare client: its serializer puts the bytes given on the wire as they are.
      raw = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
    });
    afterAll(() => raw.close());

    const send = (method: string, bytes: Buffer): Promise<unknown> =>
      new Promise((resolve, reject) => {
        const identity = (b: Buffer): Buffer => b;
        raw.makeUnaryRequest(method, identity, identity, bytes, new Metadata(), { deadline: Date.now() + 20_000 }, (err, res) =>
          err ? reject(err) : resolve(res),
        );
      });
    /** A length-delimited field holding `bytes` as they are (each field here is shorter than 128 bytes). */
    const field = (number: number, bytes: Buffer): Buffer => Buffer.concat([Buffer.from([(number << 3) | 2, bytes.length]), bytes]);
    const text = (number: number, value: string): Buffer => field(number, Buffer.from(value));
    // A stray continuation byte: decoding would make it U+FFFD, and that would be signed.
    const notUtf8 = Buffer.from([0x61, 0x80, 0x62]);

    it.each([
      ['subject', [text(1, 'HS256'), field(2, notUtf8)]],
      ['audience', [text(1, 'HS256'), text(2, 's'), field(3, notUtf8)]],
      ['claims_json', [text(1, 'HS256'), text(2, 's'), field(5, Buffer.concat([Buffer.from('{"a":"'), notUtf8, Buffer.from('"}')]))]],
    ])('refuses a %s that is not UTF-8 with INVALID_ARGUMENT naming it', async (name, parts) => {
      await expectRefused(
        send(GENERATE_JWT, Buffer.concat(parts as Buffer[])),
        new RegExp(`^GenerateJwtRequest: ${name} is not valid UTF-8$`),
      );
    });

    it('refuses 20,000 nested groups with INVALID_ARGUMENT naming the depth, not a stack overflow', async () => {
      const groups = Buffer.concat([Buffer.alloc(20_000, 0x33), Buffer.alloc(20_000, 0x34), text(1, 'HS256'), text(2, 's')]);
      await expectRefused(send(GENERATE_JWT, groups), /^GenerateJwtRequest: groups nested deeper than 100$/);
      // The health service decodes with protobufjs, whose own limit is 100 as well.
      await expectRefused(send('/grpc.health.v1.Health/Check', groups), /nesting depth exceeded/);
    });
  });

  describe('VerifyJwt', () => {
    it('refuses an empty jwt and one of 8 KiB + 1 with INVALID_ARGUMENT naming jwt', async () => {
      await expectRefused(client.verifyJwt({ jwt: '' }), /\bjwt\b/);
      await expectRefused(client.verifyJwt({ jwt: 'x'.repeat(8193) }), /\bjwt\b.*8192/);
    });

    it('refuses a 10 MiB message with RESOURCE_EXHAUSTED (the 64 KiB receive limit)', async () => {
      const err = await callError(client.verifyJwt({ jwt: 'x'.repeat(10 << 20) }));
      expect(statusName(err.code), err.details).toBe('RESOURCE_EXHAUSTED');
      await expectStillServing();
    });

    const now = nowSeconds();
    const claims = JSON.stringify({ sub: 's', iat: now, exp: now + 3600 });
    const b64 = (text: string): string => Buffer.from(text).toString('base64url');
    // Built lazily: the keys exist once beforeAll has run.
    const cases: [string, () => string, string][] = [
      ['one segment', () => 'abc', 'MALFORMED'],
      ['two segments', () => 'abc.def', 'MALFORMED'],
      ['four segments', () => `${signHs256(keys, {}, claims)}.xyz`, 'MALFORMED'],
      ['an empty header segment', () => `.${b64(claims)}.sig`, 'MALFORMED'],
      ['non-base64url characters', () => signHs256(keys, {}, claims).replace('.', '+.'), 'MALFORMED'],
      [
        'standard base64 with padding',
        () => {
          const [h, p, s] = signHs256(keys, {}, claims).split('.');
          return `${h}==.${p}.${s}`;
        },
        'MALFORMED',
      ],
      ['a header that is not JSON', () => signHs256(keys, 'not json', claims), 'MALFORMED'],
      ['a header that is an array', () => signHs256(keys, '["HS256"]', claims), 'MALFORMED'],
      ['a header that is a string', () => signHs256(keys, '"HS256"', claims), 'MALFORMED'],
      ['a signed payload that is an array', () => signHs256(keys, {}, '[1,2,3]'), 'MALFORMED'],
      ['a signed payload that is not JSON', () => signHs256(keys, {}, 'not json'), 'MALFORMED'],
      ['a signed exp that is a string', () => signHs256(keys, {}, JSON.stringify({ sub: 's', exp: String(now + 3600) })), 'MALFORMED'],
      ['a signed token without exp', () => signHs256(keys, {}, JSON.stringify({ sub: 's', iat: now })), 'MALFORMED'],
      ['a signed sub that is a number', () => signHs256(keys, {}, JSON.stringify({ sub: 42, exp: now + 3600 })), 'MALFORMED'],
      ['alg none', () => `${b64('{"alg":"none","typ":"JWT"}')}.${b64(claims)}.`, 'ALGORITHM_NOT_ALLOWED'],
      ["alg not the key's", () => signHs256(keys, { alg: 'HS512' }, claims), 'ALGORITHM_NOT_ALLOWED'],
      ['a header without kid', () => signHs256(keys, '{"alg":"HS256","typ":"JWT"}', claims), 'UNKNOWN_KEY'],
      ['a jku header', () => signHs256(keys, { jku: 'https://evil.test/jwks' }, claims), 'UNSUPPORTED_HEADER'],
      ['a crit header', () => signHs256(keys, { crit: ['exp'] }, claims), 'UNSUPPORTED_HEADER'],
    ];

    it.each(cases)('answers valid:false for %s', async (_, token, reason) => {
      const res = await client.verifyJwt({ jwt: token() });
      expect(res).toEqual({ valid: false, sub: '', claims_json: '', reason });
      await expectStillServing();
    });

    it('answers valid:true for the well-formed hand-signed token the cases above are built from', async () => {
      expect(await client.verifyJwt({ jwt: signHs256(keys, {}, claims) })).toMatchObject({ valid: true, sub: 's' });
    });
  });

  describe('after all of that', () => {
    it('the server still answers, on the old client and on a new one', async () => {
      await expectStillServing();
      const fresh = clients.jwt(port);
      await expectStillServing(fresh);
    });
  });
});
