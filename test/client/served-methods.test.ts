/**
 * A rule naming a method the server does not serve is refused at start with the nearest
 * served method as a hint (edit distance), never ignored.
 */
import { describe, expect, it } from 'vitest';
import { nearestMethod, refuseUnservedPaths } from '../../src/protected-service/served-methods.js';

const SERVED = new Set(['/demo.Greeter/Hello', '/demo.Greeter/Goodbye', '/demo.Admin/Reset']);

describe('nearestMethod', () => {
  it('finds the served method with the fewest edits, and nothing among none', () => {
    expect(nearestMethod('/demo.Greeter/Helo', SERVED)).toBe('/demo.Greeter/Hello');
    expect(nearestMethod('/demo.Admin/Rest', SERVED)).toBe('/demo.Admin/Reset');
    expect(nearestMethod('/demo.Greeter/GoodBye', SERVED)).toBe('/demo.Greeter/Goodbye');
    expect(nearestMethod('/x/y', [])).toBeUndefined();
  });
});

describe('refuseUnservedPaths', () => {
  it('accepts paths the server serves', () => {
    expect(() => refuseUnservedPaths(['/demo.Greeter/Hello', '/demo.Admin/Reset'], SERVED, (p) => `methods.${p}`)).not.toThrow();
  });

  it('refuses the first unserved path, naming its field and the nearest served method', () => {
    expect(() => refuseUnservedPaths(['/demo.Greeter/Hello', '/demo.Greeter/Helo'], SERVED, (p) => `methods["${p}"]`)).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: 'methods["/demo.Greeter/Helo"]',
        message:
          'option methods["/demo.Greeter/Helo"]: "/demo.Greeter/Helo" names no method this server serves (the nearest served method is "/demo.Greeter/Hello"); a rule that matches nothing protects nothing',
      }),
    );
  });

  it('says so when the server serves no method at all', () => {
    expect(() => refuseUnservedPaths(['/a.B/C'], new Set(), () => 'publicMethods')).toThrow(/\(the server serves no method\)/);
  });
});
