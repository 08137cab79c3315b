/**
 * The one edge between JwtService's core and gRPC (src/jwt-service/handlers.ts): every code
 * the core throws is answered with the status intended for it and with its own message;
 * INTERNAL ones, and anything that is no core error, reach the transport as they are (it
 * answers INTERNAL without internals and logs them).
 */
import { describe, expect, it } from 'vitest';
import { JwtGrpcError, type JwtGrpcErrorCode } from '../../src/base/errors.js';
import { SERVICE_ERROR_STATUS, asStatus, callerMessage } from '../../src/jwt-service/handlers.js';
import { KEY_BACKEND_UNAVAILABLE_MESSAGE } from '../../src/keys/backend.js';
import { PolicyDenied } from '../../src/policy/enforce.js';
import { GrpcStatus, GrpcStatusError } from '../../src/contracts/handler-api.js';

/** What each code of the core must be answered with, written out here on purpose: a new code, or a changed status, fails below. */
const INTENDED: Readonly<Record<string, keyof typeof GrpcStatus>> = {
  ERR_INVALID_REQUEST: 'INVALID_ARGUMENT',
  ERR_PERMISSION_DENIED: 'PERMISSION_DENIED',
  ERR_UNAUTHENTICATED: 'UNAUTHENTICATED',
  ERR_RATE_LIMITED: 'RESOURCE_EXHAUSTED',
  ERR_KEY_BACKEND_UNAVAILABLE: 'UNAVAILABLE',
  ERR_STATUS_LIST_FULL: 'UNAVAILABLE',
  ERR_REVOCATION_STORE_UNAVAILABLE: 'UNAVAILABLE',
  ERR_NO_STATUS_LIST: 'FAILED_PRECONDITION',
  ERR_NO_TOKEN_EXCHANGE: 'FAILED_PRECONDITION',
  ERR_UNKNOWN_STATUS_LIST: 'NOT_FOUND',
  ERR_SELF_CHECK_FAILED: 'INTERNAL',
};

/** What `asStatus` throws for `err`. */
function answered(err: unknown): unknown {
  try {
    asStatus(err);
  } catch (thrown) {
    return thrown;
  }
  throw new Error('asStatus returned');
}

describe('the status of each error of the core', () => {
  it('covers every code the core throws, and no other', () => {
    expect(Object.keys(SERVICE_ERROR_STATUS).sort()).toEqual(Object.keys(INTENDED).sort());
  });

  it.each(Object.entries(INTENDED).filter(([code, status]) => status !== 'INTERNAL' && code !== 'ERR_KEY_BACKEND_UNAVAILABLE'))(
    '%s is answered %s with its own message',
    (code, status) => {
      const err = new JwtGrpcError(code as JwtGrpcErrorCode, `the reason of ${code}`, { field: 'subject' });
      const thrown = answered(err);
      expect(thrown).toBeInstanceOf(GrpcStatusError);
      expect(thrown).toMatchObject({ status: GrpcStatus[status], details: `the reason of ${code}` });
      expect(callerMessage(err)).toBe(`the reason of ${code}`);
    },
  );

  it("ERR_KEY_BACKEND_UNAVAILABLE is answered UNAVAILABLE with a fixed message: the backend's words (ARNs, accounts) are for the log", () => {
    const err = new JwtGrpcError(
      'ERR_KEY_BACKEND_UNAVAILABLE',
      'key k (kms) cannot sign: AccessDeniedException: User: arn:aws:sts::111122223333:assumed-role/signer/i-0abc is not authorized',
      { field: 'k' },
    );
    expect(answered(err)).toMatchObject({ status: GrpcStatus.UNAVAILABLE, details: KEY_BACKEND_UNAVAILABLE_MESSAGE });
    expect(callerMessage(err)).toBe(KEY_BACKEND_UNAVAILABLE_MESSAGE);
  });

  it('INTERNAL ones reach the transport as they are: it answers INTERNAL without their message, and logs it', () => {
    const err = new JwtGrpcError('ERR_SELF_CHECK_FAILED', 'self-check of a token signed with kid k failed: BAD_SIGNATURE');
    expect(answered(err)).toBe(err);
    expect(callerMessage(err)).toBeUndefined();
  });

  it('a policy refusal is PERMISSION_DENIED naming the rule', () => {
    expect(answered(new PolicyDenied('subjects', 'spiffe://a', 'caller spiffe://a may not get subject "b"'))).toMatchObject({
      status: GrpcStatus.PERMISSION_DENIED,
      details: 'policy rule "subjects": caller spiffe://a may not get subject "b"',
    });
  });

  it('a status error passes as it is, and anything else (a bug) too, never with a status of its own', () => {
    const status = new GrpcStatusError(GrpcStatus.NOT_FOUND, 'n');
    expect(answered(status)).toBe(status);
    const bug = new TypeError('x is undefined');
    expect(answered(bug)).toBe(bug);
    expect(callerMessage(bug)).toBeUndefined();
    // A code of the library that the core never throws has no status here: INTERNAL.
    const other = new JwtGrpcError('ERR_INVALID_OPTION', 'option x: y');
    expect(answered(other)).toBe(other);
  });
});
