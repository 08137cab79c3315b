/**
 * Message compression (gRPC's grpc-encoding and grpc-accept-encoding): the encodings a request
 * may use, decompression bounded by maxReceiveMessageBytes, and what the client accepts back.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { GrpcStatus, GrpcStatusError } from '../../../src/contracts/handler-api.js';
import { clientAccepts, compress, decompress, requestEncoding } from '../../../src/transport/http2/compression.js';

function refusal(action: () => unknown): GrpcStatusError {
  try {
    action();
  } catch (err) {
    if (err instanceof GrpcStatusError) return err;
    throw err;
  }
  throw new Error('not refused');
}

describe('requestEncoding', () => {
  it('takes no header or identity as identity, gzip and deflate as they are', () => {
    expect(requestEncoding(undefined)).toBe('identity');
    expect(requestEncoding('identity')).toBe('identity');
    expect(requestEncoding('gzip')).toBe('gzip');
    expect(requestEncoding('deflate')).toBe('deflate');
  });

  it('gives undefined for an encoding the server does not support', () => {
    for (const other of ['br', 'snappy', 'GZIP', 'gzip, deflate', '']) expect(requestEncoding(other), other).toBeUndefined();
  });
});

describe('compress and decompress', () => {
  it('round-trips a message through gzip and deflate', () => {
    const message = Buffer.from('a'.repeat(1000));
    for (const encoding of ['gzip', 'deflate'] as const) {
      const packed = compress(encoding, message);
      expect(packed.length).toBeLessThan(message.length);
      expect(decompress(encoding, packed, 1000).equals(message)).toBe(true);
    }
  });

  it('refuses a message that inflates past the limit with RESOURCE_EXHAUSTED, naming the limit and the option', () => {
    const bomb = gzipSync(Buffer.alloc(1001));
    const err = refusal(() => decompress('gzip', bomb, 1000));
    expect(err.status).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    expect(err.code).toBe('ERR_GRPC_STATUS');
    expect(err.message).toBe('decompressed request message exceeds the limit of 1000 bytes (maxReceiveMessageBytes)');
  });

  it('refuses bytes that are not of the encoding with INTERNAL, naming it', () => {
    const err = refusal(() => decompress('deflate', Buffer.from('not deflate'), 1000));
    expect(err.status).toBe(GrpcStatus.INTERNAL);
    expect(err.message).toMatch(/^could not decompress the deflate request message: /);
  });
});

describe('clientAccepts', () => {
  it('always accepts identity', () => {
    expect(clientAccepts(undefined, 'identity')).toBe(true);
  });

  it('accepts an encoding listed in grpc-accept-encoding, spaces around items allowed', () => {
    expect(clientAccepts('identity, gzip', 'gzip')).toBe(true);
    expect(clientAccepts('deflate,gzip', 'deflate')).toBe(true);
  });

  it('refuses an encoding not listed, or with no header', () => {
    expect(clientAccepts(undefined, 'gzip')).toBe(false);
    expect(clientAccepts('identity,deflate', 'gzip')).toBe(false);
    expect(clientAccepts('gzipx', 'gzip')).toBe(false);
  });
});
