/**
 * decide(): the one decision on a call's token, in process, step by step: what it reads,
 * in which order, and that every failure of a verifier or a hook is a refusal, never a
 * throw, a rejection or an admission.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createAuthenticator, type JwtAuthInterceptorOptions, type TokenVerifier } from '../../src/protected-service/authenticate.js';
import { createAuthorizer } from '../../src/protected-service/authorize.js';
import { type CallFacts, type CallPolicy, type Verdict, decide } from '../../src/protected-service/decide.js';
import { isThenable } from '../../src/contracts/handler-api.js';
import { ANY_AUDIENCE, GrpcStatus, GrpcStatusError, type KeySet, createSigner, createVerifier, generateKeys } from '../../src/lib/index.js';

let keys: KeySet;
beforeAll(async () => {
  keys = await generateKeys({ algorithms: ['ES256'] });
});

const now = (): number => Math.floor(Date.now() / 1000);
const token = (claims: Record<string, unknown> = {}): string =>
  createSigner(keys).sign('ES256', { sub: 'ada', iat: now(), exp: now() + 600, ...claims }).token;

function policy(verifier: TokenVerifier, options: JwtAuthInterceptorOptions = {}): CallPolicy {
  return { authenticator: createAuthenticator(verifier, options), authorizer: createAuthorizer(options) };
}
const local = (): TokenVerifier => createVerifier(keys, { audience: ANY_AUDIENCE });

function facts(tokens: readonly unknown[], more: Partial<CallFacts> = {}): CallFacts {
  return { tokens, thumbprint: () => undefined, call: { method: '/demo.Greeter/Hello', metadata: {} }, ...more };
}

describe('decide', () => {
  it('admits a valid token synchronously with a synchronous verifier: no promise per call', () => {
    const verdict = decide(policy(local()), facts([`Bearer ${token()}`]));
    expect(isThenable(verdict)).toBe(false);
    expect((verdict as Verdict & { claims: unknown }).claims).toMatchObject({ sub: 'ada' });
  });

  it('refuses before verifying when there is no single Bearer token, and never asks the hook', () => {
    const verify = vi.fn();
    const authorize = vi.fn(() => true);
    const decided = (tokens: unknown[]) => decide(policy({ audience: ANY_AUDIENCE, verify }, { authorize }), facts(tokens));
    expect(decided([])).toEqual({ status: GrpcStatus.UNAUTHENTICATED, details: 'missing token' });
    expect(decided(['a', 'b'])).toEqual({ status: GrpcStatus.UNAUTHENTICATED, details: 'more than one authorization header' });
    expect(decided(['Basic x'])).toEqual({ status: GrpcStatus.UNAUTHENTICATED, details: 'authorization is not "Bearer <token>"' });
    expect(verify).not.toHaveBeenCalled();
    expect(authorize).not.toHaveBeenCalled();
  });

  it('an invalid token is UNAUTHENTICATED with the reason; the hook never runs', () => {
    const authorize = vi.fn(() => true);
    const verdict = decide(policy(local(), { authorize }), facts([`Bearer ${token({ exp: now() - 60 })}`]));
    expect(verdict).toMatchObject({ status: GrpcStatus.UNAUTHENTICATED, details: expect.stringMatching(/^EXPIRED: /) });
    expect(authorize).not.toHaveBeenCalled();
  });

  it('reads the connection certificate only for a bound token, and refuses a mismatch or an unreadable one', () => {
    const thumbprint = vi.fn(() => 'thumb-a');
    expect(decide(policy(local()), facts([`Bearer ${token()}`], { thumbprint }))).toHaveProperty('claims');
    expect(thumbprint).not.toHaveBeenCalled();
    const bound = `Bearer ${token({ cnf: { 'x5t#S256': 'thumb-b' } })}`;
    expect(decide(policy(local()), facts([bound], { thumbprint }))).toEqual({
      status: GrpcStatus.UNAUTHENTICATED,
      details: 'the token is bound to another client certificate',
    });
    expect(thumbprint).toHaveBeenCalledTimes(1);
    const unreadable = () => {
      throw new Error('no auth context');
    };
    expect(decide(policy(local()), facts([bound], { thumbprint: unreadable }))).toMatchObject({
      status: GrpcStatus.UNAUTHENTICATED,
      details: expect.stringContaining('could not be read'),
    });
    expect(decide(policy(local()), facts([bound], { thumbprint: () => 'thumb-b' }))).toHaveProperty('claims');
  });

  it('authorizes after binding: false is PERMISSION_DENIED, a hook status error keeps its status, OK or a plain error is INTERNAL', () => {
    const call = (authorize: JwtAuthInterceptorOptions['authorize']) =>
      decide(policy(local(), { authorize }), facts([`Bearer ${token()}`]));
    expect(call(() => false)).toEqual({ status: GrpcStatus.PERMISSION_DENIED, details: '/demo.Greeter/Hello: not authorized' });
    expect(
      call(() => {
        throw new GrpcStatusError(GrpcStatus.NOT_FOUND, 'no such thing');
      }),
    ).toEqual({ status: GrpcStatus.NOT_FOUND, details: 'no such thing' });
    for (const thrown of [new GrpcStatusError(GrpcStatus.OK, 'fine'), new GrpcStatusError(99 as never, 'odd'), new Error('bug'), 'text']) {
      expect(
        call(() => {
          throw thrown;
        }),
      ).toEqual({ status: GrpcStatus.INTERNAL, details: 'authorization failed' });
    }
  });

  it('an async step answers with a promise that never rejects, whatever the verifier or hook does', async () => {
    const rejecting: TokenVerifier = { audience: ANY_AUDIENCE, verify: () => Promise.reject(new Error('down')) };
    await expect(decide(policy(rejecting), facts([`Bearer ${token()}`]))).resolves.toEqual({
      status: GrpcStatus.INTERNAL,
      details: 'token verification failed',
    });
    const async: TokenVerifier = { audience: ANY_AUDIENCE, verify: (jwt, expect) => Promise.resolve(local().verify(jwt, expect)) };
    const hook = () => Promise.reject(new GrpcStatusError(GrpcStatus.OK, 'fine'));
    await expect(decide(policy(async, { authorize: hook }), facts([`Bearer ${token()}`]))).resolves.toEqual({
      status: GrpcStatus.INTERNAL,
      details: 'authorization failed',
    });
  });

  it('runs the verifier inside the trace and ends it with the authentication outcome, not the authorization', () => {
    const ended: Verdict[] = [];
    let inside = false;
    const verifier: TokenVerifier = {
      audience: ANY_AUDIENCE,
      verify: (jwt, expect) => {
        inside = true;
        return local().verify(jwt, expect);
      },
    };
    const trace = { run: <T>(verify: () => T): T => verify(), end: (outcome: Verdict) => void ended.push(outcome) };
    const run = vi.spyOn(trace, 'run');
    const verdict = decide(policy(verifier, { authorize: () => false }), facts([`Bearer ${token()}`], { trace }));
    expect(inside).toBe(true);
    expect(run).toHaveBeenCalledTimes(1);
    expect(verdict).toMatchObject({ status: GrpcStatus.PERMISSION_DENIED });
    expect(ended).toEqual([{ claims: expect.objectContaining({ sub: 'ada' }) }]);
  });
});
