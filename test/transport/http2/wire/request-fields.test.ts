/**
 * What makes a request's header list well-formed (RFC 9113 §8.1-8.3): field names, values,
 * pseudo-headers, connection-specific fields and `te`; and trailers, which are regular fields only.
 */
import { describe, expect, it } from 'vitest';
import { isFieldName, validTrailerFields, validateRequestFields } from '../../../../src/transport/http2/wire/request-fields.js';

const REQUEST = [':method', 'POST', ':scheme', 'http', ':path', '/svc/Method', ':authority', 'localhost'];

describe('isFieldName', () => {
  it('takes lowercase token characters, after the colon of a pseudo-header', () => {
    for (const name of ['content-type', 'x-a.b_c~1', ':path', "!#$%&'*+-.^_`|~"]) expect(isFieldName(name), name).toBe(true);
  });

  it('refuses an empty name, a lone colon, uppercase, spaces, separators and non-ASCII', () => {
    for (const name of ['', ':', 'Content-Type', 'a b', 'a:b', 'a,b', 'a"b', 'é', 'a\u0100']) expect(isFieldName(name), name).toBe(false);
  });
});

describe('validateRequestFields', () => {
  it('returns the pseudo-headers and the fields the server reads by name, a repeated one joined with ", "', () => {
    const headers = validateRequestFields([
      ...REQUEST,
      'grpc-accept-encoding',
      'gzip',
      'te',
      'trailers',
      'grpc-accept-encoding',
      'identity',
    ]);
    expect(headers).toEqual({
      ':method': 'POST',
      ':scheme': 'http',
      ':path': '/svc/Method',
      ':authority': 'localhost',
      'grpc-accept-encoding': 'gzip, identity',
      te: 'trailers',
    });
  });

  it('leaves every other field in the list (the metadata), whatever its name, constructor and __proto__ included', () => {
    const headers = validateRequestFields([...REQUEST, 'x-tag', 'a', 'constructor', 'b', '__proto__', 'c']) as Record<string, unknown>;
    expect(Object.entries(headers).filter(([, value]) => value !== undefined)).toEqual([
      [':method', 'POST'],
      [':scheme', 'http'],
      [':path', '/svc/Method'],
      [':authority', 'localhost'],
    ]);
    expect(Object.hasOwn(headers, 'x-tag')).toBe(false);
  });

  it('takes a CONNECT without :scheme and :path', () => {
    expect(validateRequestFields([':method', 'CONNECT', ':authority', 'host:443'])).toEqual({
      ':method': 'CONNECT',
      ':authority': 'host:443',
    });
  });

  it('with charactersChecked, leaves the characters to the caller and still applies the rules across fields', () => {
    // The HPACK decoder vouches for the characters; a list it vouches for never holds these.
    expect(validateRequestFields([...REQUEST, 'X-Tag', 'a\rb'], true)).toMatchObject({ ':path': '/svc/Method' });
    expect(validateRequestFields([...REQUEST, 'X-Tag', 'a\rb'])).toBeUndefined();
    expect(validateRequestFields([...REQUEST, 'connection', 'close'], true)).toBeUndefined();
    expect(validateRequestFields([':scheme', 'http', ':path', '/'], true)).toBeUndefined();
    expect(validateRequestFields([...REQUEST, ':path', '/other'], true)).toBeUndefined();
    expect(validTrailerFields(['X-Tag', 'a'], true)).toBe(true);
    expect(validTrailerFields([':path', '/'], true)).toBe(false);
    expect(validTrailerFields(['te', 'gzip'], true)).toBe(false);
  });

  const malformed: Record<string, string[]> = {
    'no :method': [':scheme', 'http', ':path', '/'],
    'no :scheme': [':method', 'POST', ':path', '/'],
    'no :path': [':method', 'POST', ':scheme', 'http'],
    'an empty :path': [':method', 'POST', ':scheme', 'http', ':path', ''],
    'an unknown pseudo-header': [...REQUEST, ':status', '200'],
    'a repeated pseudo-header': [...REQUEST, ':path', '/other'],
    'a pseudo-header after a regular field': [':method', 'POST', 'x-a', '1', ':scheme', 'http', ':path', '/'],
    'an uppercase name': [...REQUEST, 'X-Tag', '1'],
    'a value with NUL': [...REQUEST, 'x-tag', 'a\u0000b'],
    'a value with CR': [...REQUEST, 'x-tag', 'a\rb'],
    'a value with LF': [...REQUEST, 'x-tag', 'a\nb'],
    'a value with leading space': [...REQUEST, 'x-tag', ' a'],
    'a value with trailing tab': [...REQUEST, 'x-tag', 'a\t'],
    'a pseudo-header value with leading space': [':method', ' POST', ':scheme', 'http', ':path', '/'],
    connection: [...REQUEST, 'connection', 'close'],
    'keep-alive': [...REQUEST, 'keep-alive', '5'],
    'proxy-connection': [...REQUEST, 'proxy-connection', 'x'],
    'transfer-encoding': [...REQUEST, 'transfer-encoding', 'chunked'],
    upgrade: [...REQUEST, 'upgrade', 'h2c'],
    'te other than trailers': [...REQUEST, 'te', 'gzip'],
  };
  for (const [what, fields] of Object.entries(malformed)) {
    it(`refuses a list with ${what}`, () => {
      expect(validateRequestFields(fields)).toBeUndefined();
    });
  }

  it('takes a value with whitespace inside it, and an empty value', () => {
    expect(validateRequestFields([...REQUEST, 'content-type', 'a b\tc', 'grpc-encoding', ''])).toMatchObject({
      'content-type': 'a b\tc',
      'grpc-encoding': '',
    });
  });
});

describe('validTrailerFields', () => {
  it('takes regular fields, and no fields at all', () => {
    expect(validTrailerFields(['grpc-status', '0', 'x-tag', 'a'])).toBe(true);
    expect(validTrailerFields([])).toBe(true);
  });

  it('refuses a pseudo-header, a bad name or value, and a connection-specific field', () => {
    expect(validTrailerFields([':path', '/'])).toBe(false);
    expect(validTrailerFields(['X-Tag', 'a'])).toBe(false);
    expect(validTrailerFields(['x-tag', 'a\r\nb'])).toBe(false);
    expect(validTrailerFields(['x-ok', 'a', 'connection', 'close'])).toBe(false);
    expect(validTrailerFields(['te', 'gzip'])).toBe(false);
  });
});
