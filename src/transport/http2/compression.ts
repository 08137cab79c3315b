/**
 * Per-message compression (the gRPC project's `doc/compression.md` (https://github.com/grpc/grpc/blob/master/doc/compression.md)): gzip and deflate,
 * each message on its own (no context across messages), decompression bounded.
 */
import type { Buffer } from 'node:buffer';
import { GrpcStatusError, GrpcStatus } from '../../contracts/handler-api.js';
import { nodeZlib } from '../../base/optional-deps.js';

/** Encodings this server decompresses, for `grpc-accept-encoding`. */
export const ACCEPT_ENCODING = 'identity,deflate,gzip';

export type MessageEncoding = 'identity' | 'gzip' | 'deflate';

/** `grpc-encoding` of a request, or undefined when this server cannot decompress it. */
export function requestEncoding(header: string | undefined): MessageEncoding | undefined {
  if (header === undefined || header === 'identity') return 'identity';
  if (header === 'gzip' || header === 'deflate') return header;
  return undefined;
}

/**
 * Decompresses one message, producing at most `maxBytes` (zlib's `maxOutputLength`), so a
 * small compressed message cannot expand into a large allocation. Synchronous: bounded by
 * the same limit as any request message.
 */
export function decompress(encoding: 'gzip' | 'deflate', bytes: Buffer, maxBytes: number): Buffer {
  try {
    const options = { maxOutputLength: maxBytes };
    const zlib = nodeZlib();
    return encoding === 'gzip' ? zlib.gunzipSync(bytes, options) : zlib.inflateSync(bytes, options);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new GrpcStatusError(
        GrpcStatus.RESOURCE_EXHAUSTED,
        `decompressed request message exceeds the limit of ${maxBytes} bytes (maxReceiveMessageBytes)`,
      );
    }
    throw new GrpcStatusError(GrpcStatus.INTERNAL, `could not decompress the ${encoding} request message: ${(err as Error).message}`);
  }
}

/** Compresses one response message; level 6 is zlib's default trade-off. */
export function compress(encoding: 'gzip' | 'deflate', bytes: Buffer): Buffer {
  const zlib = nodeZlib();
  const options = { level: zlib.constants.Z_DEFAULT_COMPRESSION };
  return encoding === 'gzip' ? zlib.gzipSync(bytes, options) : zlib.deflateSync(bytes, options);
}

/** True when the request's `grpc-accept-encoding` lists `encoding` (absent: only identity). */
export function clientAccepts(acceptHeader: string | undefined, encoding: MessageEncoding): boolean {
  if (encoding === 'identity') return true;
  if (acceptHeader === undefined) return false;
  for (const item of acceptHeader.split(',')) {
    if (item.trim() === encoding) return true;
  }
  return false;
}
