/**
 * The handler API's own logic: call metadata (case-insensitive keys, repeated values in
 * order), GrpcStatusError as a JwtGrpcError, the headers gRPC reserves, and the check of an
 * interceptor list that refuses what would silently protect nothing.
 */
import { describe, expect, it } from 'vitest';
import { JwtGrpcError } from '../../src/base/errors.js';
import {
  CallKey,
  CallMetadata,
  GrpcStatus,
  GrpcStatusError,
  interceptorsProblem,
  isReservedMetadataKey,
} from '../../src/contracts/handler-api.js';

describe('CallMetadata', () => {
  it('keeps every value of a key in order, under its lower-case name', () => {
    const metadata = new CallMetadata()
      .add('X-Tag', 'a')
      .add('x-tag', 'b')
      .set('x-one', Buffer.from([1]));
    expect(metadata.get('X-TAG')).toBe('a');
    expect(metadata.getAll('x-tag')).toEqual(['a', 'b']);
    expect(metadata.get('x-one')).toEqual(Buffer.from([1]));
    expect([...metadata.entries()].map(([key]) => key)).toEqual(['x-tag', 'x-one']);
    expect(metadata.size).toBe(2);
  });

  it('replaces every value on set, forgets a key on delete, and answers nothing for a missing key', () => {
    const metadata = new CallMetadata().add('x-tag', 'a').add('x-tag', 'b');
    metadata.set('X-Tag', 'c');
    expect(metadata.getAll('x-tag')).toEqual(['c']);
    metadata.delete('X-TAG');
    expect(metadata.get('x-tag')).toBeUndefined();
    expect(metadata.getAll('x-tag')).toEqual([]);
    expect(metadata.size).toBe(0);
  });
});

describe('GrpcStatusError', () => {
  it('is a JwtGrpcError with code ERR_GRPC_STATUS, its status, details, metadata and cause', () => {
    const cause = new Error('underneath');
    const metadata = new CallMetadata().set('x-retry', 'no');
    const err = new GrpcStatusError(GrpcStatus.PERMISSION_DENIED, 'not yours', { metadata, cause });
    expect(err).toBeInstanceOf(JwtGrpcError);
    expect([err.code, err.status, err.details, err.message]).toEqual(['ERR_GRPC_STATUS', 7, 'not yours', 'not yours']);
    expect(err.metadata).toBe(metadata);
    expect(err.cause).toBe(cause);
    expect(new GrpcStatusError(GrpcStatus.INTERNAL, 'x').metadata.size).toBe(0);
  });

  it('never throws while being made, whatever its options hold: it is made on the way out of a failure', () => {
    // A misspelt option is a type error; at run time it is left unread rather than turned
    // into a second error that would hide the first.
    const err = new GrpcStatusError(GrpcStatus.INTERNAL, 'x', { metdata: new CallMetadata(), feild: 'y' } as never);
    expect(err).toMatchObject({ code: 'ERR_GRPC_STATUS', status: GrpcStatus.INTERNAL, details: 'x', field: undefined });
    expect(err.metadata.size).toBe(0);
    expect(new JwtGrpcError('ERR_FILE', 'm', { feild: 'x' } as never)).toMatchObject({ code: 'ERR_FILE', message: 'm' });
  });
});

describe('CallKey', () => {
  it('compares by identity, not by description', () => {
    const a = new CallKey<string>('claims');
    expect(a.description).toBe('claims');
    expect(a).not.toBe(new CallKey<string>('claims'));
  });
});

describe('isReservedMetadataKey', () => {
  it('reserves pseudo-headers and the headers gRPC and HTTP/2 own', () => {
    for (const name of [
      ':path',
      ':authority',
      'content-type',
      'te',
      'grpc-timeout',
      'grpc-status',
      'grpc-status-details-bin',
      'content-length',
      'connection',
      'host',
    ]) {
      expect(isReservedMetadataKey(name), name).toBe(true);
    }
  });

  it('leaves application metadata, authorization included', () => {
    for (const name of ['authorization', 'x-tenant', 'x-trace-bin', 'grpc-custom']) expect(isReservedMetadataKey(name), name).toBe(false);
  });
});

describe('interceptorsProblem', () => {
  it('takes an empty list and lists of hooks objects or functions with hooks', () => {
    const both = Object.assign(() => {}, { onCallStart: () => {} });
    expect(interceptorsProblem([])).toBeUndefined();
    expect(interceptorsProblem([{}, { onCallStart: () => {} }, { onCallEnd: () => {}, onServe: () => {} }, both])).toBeUndefined();
  });

  it('names what is wrong with a list that is not one of interceptors', () => {
    expect(interceptorsProblem({})).toBe('must be an array');
    expect(interceptorsProblem([{}, null])).toBe('entry 1 must be an object whose onCallStart and onCallEnd are functions');
    expect(interceptorsProblem(['x'])).toBe('entry 0 must be an object whose onCallStart and onCallEnd are functions');
    expect(interceptorsProblem([{ onCallStart: 'x' }])).toBe('entry 0 must be an object whose onCallStart and onCallEnd are functions');
    expect(interceptorsProblem([{ onCallEnd: 1 }])).toBe('entry 0 must be an object whose onCallStart and onCallEnd are functions');
    expect(interceptorsProblem([{ onServe: true }])).toBe('entry 0: onServe must be a function');
  });

  it('refuses a grpc-js interceptor (a bare function), which would protect nothing here', () => {
    expect(interceptorsProblem([() => {}])).toBe(
      'entry 0 is a grpc-js interceptor (a function); this server takes { onCallStart, onCallEnd } hooks',
    );
  });
});
