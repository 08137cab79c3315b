/** src/base/assert.ts: a broken invariant is a JwtGrpcError with code ERR_INTERNAL, never a plain Error. */
import { describe, expect, it } from 'vitest';
import { assert, internalError } from '../src/base/assert.js';
import { JwtGrpcError } from '../src/base/errors.js';

describe('assert', () => {
  it('passes a truthy condition and narrows it', () => {
    const value: string | undefined = 'x' as string | undefined;
    assert(value !== undefined, 'value is set');
    expect(value.length).toBe(1);
  });

  it('throws ERR_INTERNAL with the message on a falsy one', () => {
    let thrown: unknown;
    try {
      assert(0, 'no free session');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(JwtGrpcError);
    expect(thrown).toMatchObject({
      code: 'ERR_INTERNAL',
      message: 'internal error (a bug in jwt-grpc): no free session',
      field: undefined,
    });
  });

  it('internalError builds the same error for a throw behind an if', () => {
    const err = internalError('unknown reason 7');
    expect(err).toBeInstanceOf(JwtGrpcError);
    expect(err).toMatchObject({ code: 'ERR_INTERNAL', message: 'internal error (a bug in jwt-grpc): unknown reason 7' });
  });
});
