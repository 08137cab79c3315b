/** JwtGrpcError (src/base/errors.ts): a code, the field at fault, a cause. */
import { describe, expect, it } from 'vitest';
import { JwtGrpcError, invalidOption } from '../src/base/errors.js';

describe('JwtGrpcError', () => {
  it('carries its code, field and cause, and is an Error named JwtGrpcError', () => {
    const cause = new Error('low level');
    const err = new JwtGrpcError('ERR_FILE', 'cannot read x', { field: 'x', cause });
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({ name: 'JwtGrpcError', code: 'ERR_FILE', field: 'x', message: 'cannot read x', cause });
    expect(new JwtGrpcError('ERR_LISTEN', 'm')).toMatchObject({ field: undefined });
    expect('cause' in new JwtGrpcError('ERR_LISTEN', 'm', { field: 'f' }), 'no cause given, none set').toBe(false);
  });
});

describe('invalidOption', () => {
  it('names the option in the message and the field', () => {
    expect(invalidOption('port', 'must be 0 to 65535')).toMatchObject({
      code: 'ERR_INVALID_OPTION',
      field: 'port',
      message: 'option port: must be 0 to 65535',
    });
  });
});
