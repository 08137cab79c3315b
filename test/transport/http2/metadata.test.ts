/**
 * src/transport/http2/metadata.ts: metadata a handler sends is refused, before any byte is
 * written, with a JwtGrpcError (`ERR_INVALID_ARGUMENT`) naming the key, when gRPC forbids it.
 */
import { describe, expect, it } from 'vitest';
import { CallMetadata } from '../../../src/lib.js';
import { addMetadataHeaders } from '../../../src/transport/http2/metadata.js';

function headersOf(metadata: CallMetadata): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  addMetadataHeaders(headers, metadata);
  return headers;
}

describe('addMetadataHeaders', () => {
  it('writes text values as they are and binary ones as unpadded base64', () => {
    const metadata = new CallMetadata().set('x-served-by', 'eu-1').set('x-trace-bin', Buffer.from([1, 2, 3, 4]));
    expect(headersOf(metadata)).toEqual({ 'x-served-by': 'eu-1', 'x-trace-bin': 'AQIDBA' });
  });

  it.each([
    ['a reserved key', 'grpc-status'],
    ['a key with a colon', 'x:colon'],
    ['a key with a space', 'x bad'],
  ])('refuses %s with ERR_INVALID_ARGUMENT naming it', (_, key) => {
    const metadata = new CallMetadata().set(key, 'v');
    expect(() => headersOf(metadata)).toThrow(
      expect.objectContaining({ name: 'JwtGrpcError', code: 'ERR_INVALID_ARGUMENT', field: key, message: `metadata key ${JSON.stringify(key)} is reserved or not a valid gRPC header name` }),
    );
  });

  it('refuses a text value that is not printable ASCII (a header injection) with ERR_INVALID_ARGUMENT', () => {
    const metadata = new CallMetadata().set('x-note', 'a\r\nx-injected: 1');
    expect(() => headersOf(metadata)).toThrow(expect.objectContaining({ name: 'JwtGrpcError', code: 'ERR_INVALID_ARGUMENT', field: 'x-note', message: expect.stringContaining('printable ASCII') }));
  });
});
