/**
 * The gRPC over HTTP/2 protocol's two text encodings: grpc-message percent-encoding and the
 * grpc-timeout header (at most 8 digits and a unit).
 */
import { describe, expect, it } from 'vitest';
import { parseTimeout, percentEncode } from '../../../src/transport/http2/protocol.js';

describe('percentEncode', () => {
  it('leaves printable ASCII other than % as it is, the same string', () => {
    const plain = 'token expired at 12:00 (exp) ~ ok';
    expect(percentEncode(plain)).toBe(plain);
  });

  it('encodes %, control characters and the UTF-8 bytes of non-ASCII text in upper-case hex', () => {
    expect(percentEncode('100%')).toBe('100%25');
    expect(percentEncode('a\nb\t')).toBe('a%0Ab%09');
    expect(percentEncode('é€')).toBe('%C3%A9%E2%82%AC');
    expect(percentEncode('\u007f')).toBe('%7F');
  });
});

describe('parseTimeout', () => {
  it('reads each unit in milliseconds', () => {
    expect(parseTimeout('2H')).toBe(7_200_000);
    expect(parseTimeout('3M')).toBe(180_000);
    expect(parseTimeout('4S')).toBe(4000);
    expect(parseTimeout('250m')).toBe(250);
    expect(parseTimeout('1500u')).toBe(1.5);
    expect(parseTimeout('2000000n')).toBe(2);
    expect(parseTimeout('99999999S')).toBe(99_999_999_000);
  });

  it('gives NaN for a value the protocol does not allow', () => {
    for (const bad of ['', 'S', '5', '123456789S', '5s', '5X', '-5S', '1.5S', ' 5S', '5 S']) expect(parseTimeout(bad), bad).toBeNaN();
  });
});
