/**
 * createAuthenticator: its options are checked at creation, and authenticate() reads one
 * "Bearer <token>" value, asks the verifier with the expected audience and issuer, and turns
 * every answer (valid, invalid, a throw, a rejection, a malformed result) into an outcome,
 * never a throw. decide.test.ts covers how decide() composes it with the authorizer.
 */
import { describe, expect, it, vi } from 'vitest';
import { type TokenVerifier, createAuthenticator, failedStep } from '../../src/protected-service/authenticate.js';
import { ANY_AUDIENCE } from '../../src/lib/index.js';
import { GrpcStatus, GrpcStatusError } from '../../src/contracts/handler-api.js';

const PAYLOAD = { sub: 'ada', iat: 1, exp: 2 };
const valid = (): TokenVerifier => ({ audience: ANY_AUDIENCE, verify: vi.fn(() => ({ valid: true, payload: PAYLOAD }) as never) });

describe('createAuthenticator options', () => {
  it('defaults to the authorization header and the health methods as public', () => {
    const auth = createAuthenticator(valid(), {});
    expect(auth.metadataKey).toBe('authorization');
    expect(auth.isPublic('/grpc.health.v1.Health/Check')).toBe(true);
    expect(auth.isPublic('/demo.Greeter/Hello')).toBe(false);
  });

  it('takes its own public methods instead of the defaults', () => {
    const auth = createAuthenticator(valid(), { publicMethods: ['/demo.Greeter/Hello'] });
    expect(auth.isPublic('/demo.Greeter/Hello')).toBe(true);
    expect(auth.isPublic('/grpc.health.v1.Health/Check')).toBe(false);
  });

  it.each([
    [{ publicMethods: 'x' }, 'publicMethods', 'option publicMethods: must be an array of method paths'],
    [
      { publicMethods: ['/nope'] },
      'publicMethods',
      'option publicMethods: "/nope" is not a full method path like "/package.Service/Method"',
    ],
    [{ metadataKey: 'Auth' }, 'metadataKey', 'option metadataKey: "Auth" must be a lower-case ASCII header name, not -bin or grpc-'],
    [{ metadataKey: 'x-token-bin' }, 'metadataKey', expect.stringContaining('"x-token-bin" must be')],
    [{ metadataKey: 'grpc-token' }, 'metadataKey', expect.stringContaining('"grpc-token" must be')],
    [{ issuer: '' }, 'issuer', 'option issuer: must be a non-empty string, got ""'],
  ])('refuses %j naming the option', (options, field, message) => {
    expect(() => createAuthenticator(valid(), options as never)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', field, message }),
    );
  });

  it('refuses a verifier without verify(), and an unknown option', () => {
    expect(() => createAuthenticator({} as TokenVerifier, {})).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: 'verifier',
        message: 'option verifier: must have a verify(token, expect) method',
      }),
    );
    expect(() => createAuthenticator(valid(), { audiance: 'x' } as never)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_OPTION' }));
  });

  it('needs an audience when the verifier has none of its own', () => {
    const bare: TokenVerifier = { verify: () => ({ valid: true, payload: PAYLOAD }) as never };
    expect(() => createAuthenticator(bare, {})).toThrow(expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'audience' }));
    expect(() => createAuthenticator(bare, { audience: 'api' })).not.toThrow();
  });
});

describe('authenticate', () => {
  it('admits a single Bearer value (any case, spaces around) with the verifier claims, passing audience and issuer', () => {
    const verifier = valid();
    const auth = createAuthenticator(verifier, { audience: 'api', issuer: 'https://iss' });
    expect(auth.authenticate(['bearer   tok.en.x  '])).toEqual({ claims: PAYLOAD });
    expect(verifier.verify).toHaveBeenCalledWith('tok.en.x', { audience: 'api', issuer: 'https://iss' });
  });

  it('asks the verifier with no expectations when none are set', () => {
    const verifier = valid();
    createAuthenticator(verifier, {}).authenticate(['Bearer t']);
    expect(verifier.verify).toHaveBeenCalledWith('t', undefined);
  });

  it.each([
    [[], 'missing token'],
    [['Bearer a', 'Bearer b'], 'more than one x-token header'],
    [['Basic abc'], 'x-token is not "Bearer <token>"'],
    [['Bearer a b'], 'x-token is not "Bearer <token>"'],
    [[Buffer.from('Bearer a')], 'x-token is not "Bearer <token>"'],
  ])('refuses %j as UNAUTHENTICATED without asking the verifier', (values, details) => {
    const verifier = valid();
    expect(createAuthenticator(verifier, { metadataKey: 'x-token' }).authenticate(values)).toEqual({
      status: GrpcStatus.UNAUTHENTICATED,
      details,
    });
    expect(verifier.verify).not.toHaveBeenCalled();
  });

  it('refuses an invalid token with its reason and message', () => {
    const auth = createAuthenticator(
      { audience: ANY_AUDIENCE, verify: () => ({ valid: false, reason: 'expired', message: 'exp passed' }) as never },
      {},
    );
    expect(auth.authenticate(['Bearer t'])).toEqual({ status: GrpcStatus.UNAUTHENTICATED, details: 'expired: exp passed' });
  });

  it('answers INTERNAL for a malformed result or a throw, and the status of a thrown GrpcStatusError', () => {
    const answering = (verify: TokenVerifier['verify']) =>
      createAuthenticator({ audience: ANY_AUDIENCE, verify }, {}).authenticate(['Bearer t']);
    const internal = { status: GrpcStatus.INTERNAL, details: 'token verification failed' };
    expect(answering(() => ({ valid: true }) as never)).toEqual(internal);
    expect(answering(() => null as never)).toEqual(internal);
    expect(
      answering(() => {
        throw new Error('secret detail');
      }),
    ).toEqual(internal);
    expect(
      answering(() => {
        throw new GrpcStatusError(GrpcStatus.UNAVAILABLE, 'keys not loaded');
      }),
    ).toEqual({ status: GrpcStatus.UNAVAILABLE, details: 'keys not loaded' });
  });

  it('answers an asynchronous verifier asynchronously, and a rejection is an outcome', async () => {
    const auth = (verify: TokenVerifier['verify']) => createAuthenticator({ audience: ANY_AUDIENCE, verify }, {});
    await expect(auth(async () => ({ valid: true, payload: PAYLOAD }) as never).authenticate(['Bearer t'])).resolves.toEqual({
      claims: PAYLOAD,
    });
    await expect(auth(() => Promise.reject(new Error('down'))).authenticate(['Bearer t'])).resolves.toEqual({
      status: GrpcStatus.INTERNAL,
      details: 'token verification failed',
    });
    const badThen = {
      // biome-ignore lint/suspicious/noThenProperty: a thenable whose then throws is the case under test
      then() {
        throw new Error('then throws');
      },
    };
    await expect(auth(() => badThen as never).authenticate(['Bearer t'])).resolves.toMatchObject({ status: GrpcStatus.INTERNAL });
  });
});

describe('failedStep', () => {
  it('keeps an error status of a GrpcStatusError and maps everything else, OK included, to INTERNAL', () => {
    expect(failedStep(new GrpcStatusError(GrpcStatus.PERMISSION_DENIED, 'no'), 'x')).toEqual({
      status: GrpcStatus.PERMISSION_DENIED,
      details: 'no',
    });
    expect(failedStep(new GrpcStatusError(GrpcStatus.OK, 'fine'), 'x')).toEqual({ status: GrpcStatus.INTERNAL, details: 'x' });
    expect(failedStep(new Error('e'), 'x')).toEqual({ status: GrpcStatus.INTERNAL, details: 'x' });
  });
});
