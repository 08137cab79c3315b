/**
 * JwtService's own JSON readers and writers (src/jwt-service/codec/json.ts) against the
 * generic proto3 JSON mapping of @bufbuild/protobuf (src/transport/protocols/json.ts): for
 * every request body in the table the call's codec with the shortcut gives the same request
 * object, or the same refusal (status and message), as the mapping alone; for every response
 * the same JSON bytes. The common shapes are taken by the shortcut itself, so the table
 * measures it, not the fallback.
 */
import { Buffer } from 'node:buffer';
import { beforeAll, describe, expect, it } from 'vitest';
import { JWT_SERVICE_JSON } from '../../../src/jwt-service/codec/json.js';
import { jwtServiceDefinition } from '../../../src/jwt-service/definition.js';
import type { MethodDescriptor } from '../../../src/contracts/handler-api.js';
import type { Route } from '../../../src/transport/http2/router.js';
import type { MessageCodec } from '../../../src/transport/protocols/call.js';
import { jsonCodec, loadJsonMapping } from '../../../src/transport/protocols/json.js';

/** The call codec of `name` with the shortcut, and with the generic mapping alone. */
function codecs(name: string): { fast: MessageCodec; generic: MessageCodec } {
  const definition = jwtServiceDefinition()[name] as MethodDescriptor<unknown, unknown>;
  const route = (method: MethodDescriptor<unknown, unknown>) => ({ path: method.path, definition: method }) as Route;
  const { requestFromJson: _reader, responseToJson: _writer, ...plain } = definition;
  return { fast: jsonCodec(route(definition)) as MessageCodec, generic: jsonCodec(route(plain)) as MessageCodec };
}

/** What a codec call gave: the value, or the refusal's status and message. */
function outcome(run: () => unknown): unknown {
  try {
    return { value: run() };
  } catch (err) {
    return { status: (err as { status?: number }).status, message: (err as Error).message };
  }
}

/** Request bodies of every method's fields: valid shapes, the mapping's corners, and what it refuses. */
const COMMON_BODIES = ['{}', '[]', 'null', '"x"', '1', '{"unknown":"x"}', '{"__proto__":{}}', 'not json'];

const REQUEST_BODIES: Readonly<Record<string, { readonly fast: readonly string[]; readonly other: readonly string[] }>> = {
  GenerateJwt: {
    fast: [
      '{"algorithm":"HS256"}',
      '{"algorithm":"ES256","subject":"ada@example.com","audience":"api","ttlSeconds":"60","claimsJson":"{\\"role\\":\\"admin\\"}"}',
      '{"algorithm":"HS256","ttl_seconds":60,"claims_json":"{}"}',
      '{"algorithm":"HS256","ttlSeconds":"-5","subject":"é😀"}',
      '{"algorithm":null,"ttlSeconds":null,"subject":""}',
      '{"ttlSeconds":"0"}',
      '{"ttlSeconds":-0}',
      '{"ttlSeconds":"999999999999999"}',
    ],
    other: [
      '{"ttlSeconds":"9007199254740993"}',
      '{"ttlSeconds":"-9223372036854775808"}',
      '{"ttlSeconds":"9223372036854775808"}',
      '{"ttlSeconds":"1e3"}',
      '{"ttlSeconds":" 5"}',
      '{"ttlSeconds":"007"}',
      '{"ttlSeconds":1.5}',
      '{"ttlSeconds":1e300}',
      '{"ttlSeconds":"abc"}',
      '{"ttlSeconds":true}',
      '{"algorithm":5}',
      '{"algorithm":["HS256"]}',
      '{"algorithm":{}}',
      '{"subject":"\\ud800"}',
      '{"ttlSeconds":"60","ttl_seconds":"60"}',
      '{"claimsJson":null,"claims_json":"{}"}',
      '{"algorithm":"HS256","Algorithm":"HS256"}',
    ],
  },
  VerifyJwt: {
    fast: ['{"jwt":"a.b.c"}', '{"jwt":"a.b.c","audience":"api","issuer":"https://issuer.example"}', '{"jwt":null}'],
    other: ['{"jwt":1}', '{"jwt":"a","Jwt":"b"}', '{"valid":true}'],
  },
  GetJwks: { fast: ['{}'], other: ['{"uri":""}'] },
  GetStatusList: { fast: ['{"uri":"https://issuer.example/statuslists/1"}', '{"uri":""}'], other: ['{"uri":false}'] },
  RevokeJwt: {
    fast: [
      '{"jwt":"a.b.c","reason":"laptop stolen"}',
      '{"jti":"mB3jv0pQ7xX9cJqYg1a2Rw","expiresAt":"1767225600"}',
      '{"expires_at":1767225600}',
    ],
    other: ['{"expiresAt":"1767225600","expires_at":"1"}', '{"expiresAt":"18446744073709551615"}', '{"revoked":true}'],
  },
};

/** Responses as handlers give them, and values only a broken handler would give. */
const RESPONSES: Readonly<Record<string, readonly object[]>> = {
  GenerateJwt: [
    { jwt: 'e30.e30.sig', sub: 'ada@example.com', kid: 'k1', expires_at: 1767225600 },
    { jwt: '', sub: '', kid: '', expires_at: 0 },
    { jwt: 'x', sub: 'é😀"\\\n', kid: 'k', expires_at: -1 },
    { jwt: 'x', sub: '\ud800', kid: 'k', expires_at: 2 ** 60 },
    { jwt: 'a\tb\u0001\u007f\u2028', sub: 'q"', kid: '\\', expires_at: 5 },
  ],
  VerifyJwt: [
    { valid: true, sub: 'ada', claims_json: '{"sub":"ada","n":1}', reason: 'REASON_UNSPECIFIED' },
    { valid: false, sub: '', claims_json: '', reason: 'EXPIRED' },
    { valid: false, sub: '', claims_json: '', reason: 'REVOKED' },
  ],
  GetJwks: [{ jwks_json: '{"keys":[]}' }, { jwks_json: '' }],
  GetStatusList: [{ token: 'e30.e30.sig' }],
  RevokeJwt: [
    { revoked: true, expires_at: 1767225660 },
    { revoked: false, expires_at: 0 },
  ],
};

beforeAll(async () => {
  await loadJsonMapping();
});

describe('JwtService JSON shortcut against the generic proto3 JSON mapping', () => {
  for (const [name, bodies] of Object.entries(REQUEST_BODIES)) {
    it(`${name}: every request body reads to the same request or the same refusal`, () => {
      const { fast, generic } = codecs(name);
      for (const body of [...COMMON_BODIES, ...bodies.fast, ...bodies.other]) {
        const bytes = Buffer.from(body, 'utf8');
        expect(
          outcome(() => fast.decode(bytes)),
          body,
        ).toStrictEqual(outcome(() => generic.decode(bytes)));
      }
    });

    it(`${name}: the common request shapes are read by the shortcut itself`, () => {
      const reader = JWT_SERVICE_JSON[name]?.request;
      for (const body of bodies.fast) expect(reader?.(JSON.parse(body)), body).toBeDefined();
      for (const body of bodies.other) expect(reader?.(JSON.parse(body)), body).toBeUndefined();
    });
  }

  for (const [name, responses] of Object.entries(RESPONSES)) {
    it(`${name}: every response writes the same JSON bytes`, () => {
      const { fast, generic } = codecs(name);
      const writer = JWT_SERVICE_JSON[name]?.response as (message: object) => Buffer | undefined;
      for (const response of responses) {
        expect(fast.encode(response).toString('utf8'), JSON.stringify(response)).toBe(generic.encode(response).toString('utf8'));
      }
      expect(writer(responses[0] as object)).toBeDefined();
    });
  }

  it('a response value the shortcut does not write is left to the generic mapping, which refuses it as before', () => {
    const { fast, generic } = codecs('VerifyJwt');
    const broken = { valid: false, sub: '', claims_json: '', reason: 'NO_SUCH_REASON' };
    expect(JWT_SERVICE_JSON.VerifyJwt?.response(broken as never)).toBeUndefined();
    expect(outcome(() => fast.encode(broken))).toStrictEqual(outcome(() => generic.encode(broken)));
  });
});
