/** Optional peer dependencies (src/base/optional-deps.ts): loaded on first use, and a missing one named with the command that installs it. */
import { describe, expect, it } from 'vitest';
import { installHint, promClient, requireOptional } from '../src/base/optional-deps.js';

describe('installHint', () => {
  it('names only the packages that are missing, versions kept', () => {
    expect(installHint(['prom-client', 'jwt-grpc-no-such-package@^2'])).toBe('npm install jwt-grpc-no-such-package@^2');
    expect(installHint(['@grpc/grpc-js', '@scope/jwt-grpc-missing'])).toBe('npm install @scope/jwt-grpc-missing');
  });

  it('names them all when none is missing (the hint is still the install command)', () => {
    expect(installHint(['prom-client'])).toBe('npm install prom-client');
  });
});

describe('lazy loaders', () => {
  it('load the module once, on first use', () => {
    expect(promClient()).toBe(promClient());
    expect(typeof promClient().Registry).toBe('function');
  });
});

describe('requireOptional', () => {
  it('returns what loads', () => {
    expect(requireOptional(() => 42, 'x', 'y')).toBe(42);
  });

  it('turns a missing module into ERR_INVALID_KEY naming who needs it and how to install it', () => {
    const missing = Object.assign(new Error("Cannot find module 'pkcs11js'"), { code: 'MODULE_NOT_FOUND' });
    let caught: unknown;
    try {
      requireOptional(
        () => {
          throw missing;
        },
        'jwt-grpc-no-such-package',
        'key hsm-1 (pkcs11)',
      );
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({
      code: 'ERR_INVALID_KEY',
      message:
        'key hsm-1 (pkcs11) needs jwt-grpc-no-such-package, an optional peer dependency not installed here: npm install jwt-grpc-no-such-package',
      cause: missing,
    });
  });

  it('lets any other load error through as it is', () => {
    const broken = new SyntaxError('bad module');
    expect(() =>
      requireOptional(
        () => {
          throw broken;
        },
        'p',
        'n',
      ),
    ).toThrow(broken);
  });
});
