/**
 * requestClaims: a GenerateJwt request becomes the claims to sign, or ERR_INVALID_REQUEST naming
 * the field: the subject (or the pool's next), a lifetime within maxTtlSeconds, the audience, and
 * claims_json that is a bounded JSON object, round-trips, and sets no reserved claim.
 */
import { describe, expect, it } from 'vitest';
import { RESERVED_CLAIMS, requestClaims } from '../../src/jwt-service/request-claims.js';
import { resolveServiceOptions } from '../../src/jwt-service/options.js';
import { createSubjectPool } from '../../src/jwt-service/subject-pool.js';
import type { GenerateJwtRequest } from '../../src/jwt-service/messages.js';

const quiet = { info() {}, warn() {}, error() {} };
const options = resolveServiceOptions({
  logger: quiet,
  maxSubjectLength: 8,
  maxClaimsJsonBytes: 64,
  maxTtlSeconds: 3600,
  defaultTtlSeconds: 600,
});
const NOW = 1_700_000_000;
const request = (more: Partial<GenerateJwtRequest> = {}): GenerateJwtRequest => ({
  algorithm: 'ES256',
  subject: 'ada',
  audience: '',
  ttl_seconds: 0,
  claims_json: '',
  ...more,
});
const invalid = (field: string, message: string) =>
  expect.objectContaining({ code: 'ERR_INVALID_REQUEST', field, message: `${field}: ${message}` });

describe('requestClaims', () => {
  it('signs sub, iat, exp in that order, a fresh jti, and the default lifetime for 0', () => {
    const a = requestClaims(request(), options, undefined, NOW);
    const b = requestClaims(request(), options, undefined, NOW);
    expect(a.sub).toBe('ada');
    expect(a.exp).toBe(NOW + 600);
    expect(Object.keys(a.claims)).toEqual(['sub', 'iat', 'exp', 'jti']);
    expect(a.claims).toMatchObject({ sub: 'ada', iat: NOW, exp: NOW + 600 });
    expect(a.claims['jti']).toMatch(/^[\w-]{22}$/);
    expect(a.claims['jti']).not.toBe(b.claims['jti']);
  });

  it('adds iss, aud and extra claims when given, and no jti when it is off', () => {
    const withIss = { ...options, issuer: 'https://iss', jti: false };
    const { claims } = requestClaims(
      request({ audience: 'api', ttl_seconds: 60, claims_json: '{"scope":"r","__proto__":1}' }),
      withIss,
      undefined,
      NOW,
    );
    expect(claims).toEqual({ sub: 'ada', iat: NOW, exp: NOW + 60, iss: 'https://iss', aud: 'api', scope: 'r', ['__proto__']: 1 });
    expect(Object.hasOwn(claims, '__proto__')).toBe(true);
  });

  it("takes the pool's next subject for an empty one, and refuses an empty one without a pool", () => {
    const pool = createSubjectPool(['p1', 'p2']);
    expect(requestClaims(request({ subject: '' }), options, pool, NOW).sub).toBe('p1');
    expect(requestClaims(request({ subject: '' }), options, pool, NOW).sub).toBe('p2');
    expect(() => requestClaims(request({ subject: '' }), options, undefined, NOW)).toThrow(
      invalid('subject', 'is empty and the server has no subject pool'),
    );
  });

  it.each([
    [{ subject: 'x'.repeat(9) }, 'subject', 'is longer than 8 characters'],
    [{ audience: 'x'.repeat(9) }, 'audience', 'is longer than 8 characters'],
    [{ ttl_seconds: 3601 }, 'ttl_seconds', 'must be from 1 to 3600 (0 means 600)'],
    [{ ttl_seconds: -1 }, 'ttl_seconds', 'must be from 1 to 3600 (0 means 600)'],
    [{ claims_json: `{"a":"${'x'.repeat(60)}"}` }, 'claims_json', 'is longer than 64 bytes'],
    [{ claims_json: '{' }, 'claims_json', 'is not valid JSON'],
    [{ claims_json: '[1]' }, 'claims_json', 'must be a JSON object'],
    [{ claims_json: 'null' }, 'claims_json', 'must be a JSON object'],
    [{ claims_json: '{"sub":"eve"}' }, 'claims_json', 'may not set the reserved claim "sub"'],
    [{ claims_json: '{"status":{}}' }, 'claims_json', 'may not set the reserved claim "status"'],
  ])('refuses %j', (more, field, message) => {
    expect(() => requestClaims(request(more), options, undefined, NOW)).toThrow(invalid(field, message));
  });

  it('refuses claims_json that would not sign as sent (a repeated key)', () => {
    expect(() => requestClaims(request({ claims_json: '{"a":1,"a":2}' }), options, undefined, NOW)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_REQUEST', field: 'claims_json' }),
    );
  });

  it('reserves the registered claims and the ones the server sets', () => {
    expect([...RESERVED_CLAIMS].sort()).toEqual(['aud', 'client_id', 'cnf', 'exp', 'iat', 'iss', 'jti', 'nbf', 'status', 'sub']);
  });
});
