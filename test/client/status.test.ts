/**
 * The grpc-js edge of the client: a grpc-js ServiceError becomes a GrpcStatusError with its
 * code, details (less grpc-js's empty resolution note) and metadata; CallMetadata becomes
 * grpc-js Metadata; a status code reads as its name.
 */
import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { statusName, toGrpcMetadata, toGrpcStatusError } from '../../src/client/status.js';
import { CallMetadata, GrpcStatusError } from '../../src/contracts/handler-api.js';

function serviceError(code: number, details: string, metadata: Metadata | undefined): ServiceError {
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata }) as ServiceError;
}

describe('toGrpcStatusError', () => {
  it('keeps the code, details and every metadata value, and the error as its cause', () => {
    const metadata = new Metadata();
    metadata.add('x-reason', 'one');
    metadata.add('x-reason', 'two');
    const err = serviceError(status.PERMISSION_DENIED, 'no', metadata);
    const out = toGrpcStatusError(err);
    expect(out).toBeInstanceOf(GrpcStatusError);
    expect(out).toMatchObject({ code: 'ERR_GRPC_STATUS', status: status.PERMISSION_DENIED, details: 'no', cause: err });
    expect(out.metadata.getAll('x-reason')).toEqual(['one', 'two']);
  });

  it("drops grpc-js's empty resolution note, and only that", () => {
    const note = toGrpcStatusError(serviceError(status.UNAVAILABLE, 'No connection established. Resolution note: ', undefined));
    expect(note.details).toBe('No connection established');
    const kept = toGrpcStatusError(serviceError(status.UNAVAILABLE, 'down. Resolution note: dns failed', undefined));
    expect(kept.details).toBe('down. Resolution note: dns failed');
  });
});

describe('toGrpcMetadata', () => {
  it('copies every value, and makes empty metadata of none', () => {
    const metadata = new CallMetadata();
    metadata.add('a', '1');
    metadata.add('a', '2');
    expect(toGrpcMetadata(metadata).get('a')).toEqual(['1', '2']);
    expect(toGrpcMetadata(undefined).toJSON()).toEqual({});
  });
});

describe('statusName', () => {
  it('names a known code and shows an unknown one as its number', () => {
    expect(statusName(status.UNAUTHENTICATED)).toBe('UNAUTHENTICATED');
    expect(statusName(99)).toBe('99');
  });
});
