/**
 * The Redis store's URL and options, resolved once at start: each part of a redis:// or
 * rediss:// URL, a target to log that holds no password, and every refusal naming the option.
 */
import { describe, expect, it } from 'vitest';
import { thrownBy } from '../../bench/kit/thrown.js';
import { JwtGrpcError } from '../../src/base/errors.js';
import { REDIS_STORE_DEFAULTS, parseRedisUrl, resolveRedisStoreOptions } from '../../src/revocation/redis-options.js';

const SHAPE = 'redis://[USER:PASSWORD@]HOST[:PORT][/DB] or rediss://... (TLS)';

describe('parseRedisUrl', () => {
  it('reads host, port 6379 and database 0 by default, without TLS', () => {
    expect(parseRedisUrl('redis://cache.internal')).toEqual({
      host: 'cache.internal',
      port: 6379,
      tls: false,
      database: 0,
      username: undefined,
      password: undefined,
      target: 'redis://cache.internal/0',
    });
    expect(parseRedisUrl('redis://cache.internal/').database).toBe(0);
  });

  it('reads TLS, a port, a database, a bare IPv6 host, and decoded credentials kept out of the target', () => {
    const parsed = parseRedisUrl('rediss://app%40x:p%3Ass@[::1]:6380/3');
    expect(parsed).toEqual({
      host: '::1',
      port: 6380,
      tls: true,
      database: 3,
      username: 'app@x',
      password: 'p:ss',
      target: 'rediss://app%40x@[::1]:6380/3',
    });
    expect(parsed.target).not.toContain('p:ss');
    expect(parseRedisUrl('redis://:only-password@h').target).toBe('redis://h/0');
  });

  const refused: [string, unknown, string][] = [
    ['no URL', undefined, `expected ${SHAPE}`],
    ['an empty URL', '', `expected ${SHAPE}`],
    ['text that is not a URL', 'cache:6379', "scheme 'cache:' is not redis: or rediss:; expected " + SHAPE],
    ['an unparsable URL', 'redis://[bad', `not a URL; expected ${SHAPE}`],
    ['another scheme', 'http://cache', `scheme 'http:' is not redis: or rediss:; expected ${SHAPE}`],
    ['no host', 'redis://', `no host; expected ${SHAPE}`],
    ['a path that is not a database', 'redis://cache/db1', `the path must be a database number (/0, /1, ...); expected ${SHAPE}`],
    ['a database of too many digits', 'redis://cache/123456', `the path must be a database number (/0, /1, ...); expected ${SHAPE}`],
    [
      'query parameters',
      'redis://cache?password=x',
      'query parameters and fragments are not read; put the user and password before the host and the database after it',
    ],
    [
      'a fragment',
      'redis://cache#x',
      'query parameters and fragments are not read; put the user and password before the host and the database after it',
    ],
  ];
  for (const [what, url, message] of refused) {
    it(`refuses ${what} with ERR_INVALID_OPTION on revocationStore`, () => {
      const err = thrownBy(JwtGrpcError, () => parseRedisUrl(url));
      expect([err.code, err.field, err.message]).toEqual(['ERR_INVALID_OPTION', 'revocationStore', `option revocationStore: ${message}`]);
    });
  }
});

describe('resolveRedisStoreOptions', () => {
  it('fills the defaults', () => {
    expect(resolveRedisStoreOptions('redis://h', {})).toMatchObject({
      keyPrefix: REDIS_STORE_DEFAULTS.keyPrefix,
      resyncIntervalMs: 10_000,
      commandTimeoutMs: 2_000,
      reconnectMaxDelayMs: 2_000,
      connection: { host: 'h' },
    });
  });

  it('takes values at the bounds', () => {
    expect(
      resolveRedisStoreOptions('redis://h', { keyPrefix: 'x'.repeat(128), resyncIntervalMs: 100, commandTimeoutMs: 60_000 }),
    ).toMatchObject({
      resyncIntervalMs: 100,
      commandTimeoutMs: 60_000,
    });
  });

  it('refuses a key prefix empty, longer than 128 or with whitespace', () => {
    for (const keyPrefix of ['', 'x'.repeat(129), 'a b', 5]) {
      const err = thrownBy(JwtGrpcError, () => resolveRedisStoreOptions('redis://h', { keyPrefix: keyPrefix as string }));
      expect([err.field, err.message], String(keyPrefix)).toEqual([
        'keyPrefix',
        'option keyPrefix: expected 1 to 128 characters without whitespace',
      ]);
    }
  });

  it('refuses an interval or timeout outside its bounds or not an integer', () => {
    for (const [field, value, message] of [
      ['resyncIntervalMs', 99, 'expected an integer from 100 to 3600000 (milliseconds)'],
      ['resyncIntervalMs', 3_600_001, 'expected an integer from 100 to 3600000 (milliseconds)'],
      ['commandTimeoutMs', 49, 'expected an integer from 50 to 60000 (milliseconds)'],
      ['commandTimeoutMs', 100.5, 'expected an integer from 50 to 60000 (milliseconds)'],
      ['commandTimeoutMs', '100', 'expected an integer from 50 to 60000 (milliseconds)'],
    ] as const) {
      const err = thrownBy(JwtGrpcError, () => resolveRedisStoreOptions('redis://h', { [field]: value }));
      expect([err.code, err.field, err.message], `${field} ${value}`).toEqual(['ERR_INVALID_OPTION', field, `option ${field}: ${message}`]);
    }
  });
});
