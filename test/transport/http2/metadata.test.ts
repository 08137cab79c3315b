/**
 * Call metadata to and from HTTP/2 header fields: reserved names dropped on the way in,
 * -bin values base64 both ways, and a key or value that cannot be a header refused on the way out.
 */
import { describe, expect, it } from 'vitest';
import { CallMetadata } from '../../../src/contracts/handler-api.js';
import { type HeaderFields, addMetadataHeaders, metadataFromRawHeaders } from '../../../src/transport/http2/metadata.js';

describe('metadataFromRawHeaders', () => {
  it('keeps custom headers in order, repeated ones as several values, and drops pseudo- and reserved headers', () => {
    const metadata = metadataFromRawHeaders([
      ':path',
      '/a/b',
      'content-type',
      'application/grpc',
      'te',
      'trailers',
      'grpc-timeout',
      '1S',
      'x-a',
      '1',
      'x-a',
      '2',
      'authorization',
      'Bearer t',
    ]);
    expect([...metadata.entries()]).toEqual([
      ['x-a', ['1', '2']],
      ['authorization', ['Bearer t']],
    ]);
  });

  it('decodes -bin values from base64, padded or not, a comma-joined value as several', () => {
    const metadata = metadataFromRawHeaders(['x-trace-bin', 'AQID', 'x-two-bin', 'AQ, AgM=']);
    expect(metadata.getAll('x-trace-bin')).toEqual([Buffer.from([1, 2, 3])]);
    expect(metadata.getAll('x-two-bin')).toEqual([Buffer.from([1]), Buffer.from([2, 3])]);
  });
});

describe('addMetadataHeaders', () => {
  it('writes one value as a string, several as a list, -bin values as unpadded base64, and adds to a field already there', () => {
    const target: HeaderFields = { 'x-a': 'first' };
    addMetadataHeaders(
      target,
      new CallMetadata()
        .add('x-a', 'second')
        .add('x-b', '1')
        .add('x-b', '2')
        .set('x-c-bin', Buffer.from([1]))
        .set('x-d-bin', 'hi'),
    );
    expect(target).toEqual({ 'x-a': ['first', 'second'], 'x-b': ['1', '2'], 'x-c-bin': 'AQ', 'x-d-bin': 'aGk' });
  });

  it('refuses a reserved key or one that is not a gRPC header name, naming it', () => {
    for (const key of ['grpc-status', 'content-type', 'te', 'x a', 'x:y']) {
      expect(() => addMetadataHeaders({}, new CallMetadata().set(key, 'v')), key).toThrow(
        expect.objectContaining({
          name: 'JwtGrpcError',
          code: 'ERR_INVALID_ARGUMENT',
          field: key,
          message: `metadata key ${JSON.stringify(key)} is reserved or not a valid gRPC header name`,
        }),
      );
    }
  });

  it('refuses a non-ASCII or control-character value, or a Buffer, on a key without -bin', () => {
    for (const value of ['é', 'a\nb', Buffer.from('x')]) {
      expect(() => addMetadataHeaders({}, new CallMetadata().set('x-a', value))).toThrow(
        expect.objectContaining({
          code: 'ERR_INVALID_ARGUMENT',
          field: 'x-a',
          message: 'metadata x-a: a value of a key without "-bin" must be a printable ASCII string',
        }),
      );
    }
  });
});
