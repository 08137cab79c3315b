/**
 * The error a call that must fail threw, typed, so that a test asserts its code, field and
 * message rather than only that something was thrown. Anything else thrown fails the test as
 * it is; nothing thrown fails it saying what was expected.
 *
 * @example
 * ```ts
 * expect(thrownBy(JwtGrpcError, () => parseRedisUrl('http://x'))).toMatchObject({ code: 'ERR_INVALID_OPTION' });
 * expect(await rejectedBy(JwtGrpcError, store.open())).toMatchObject({ code: 'ERR_REVOCATION_STORE' });
 * ```
 */
type ErrorClass<E> = abstract new (...args: never[]) => E;

/** What `action` threw, when it is a `kind`. */
export function thrownBy<E>(kind: ErrorClass<E>, action: () => unknown): E {
  try {
    action();
  } catch (err) {
    if (err instanceof kind) return err;
    throw err;
  }
  throw new Error(`nothing was thrown (expected a ${kind.name})`);
}

/** What `promise` rejected with, when it is a `kind`. */
export async function rejectedBy<E>(kind: ErrorClass<E>, promise: Promise<unknown>): Promise<E> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof kind) return err;
    throw err;
  }
  throw new Error(`nothing was rejected (expected a ${kind.name})`);
}
