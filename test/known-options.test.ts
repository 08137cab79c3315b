/** Unknown options refused by name (src/base/known-options.ts): the path, the owner, a suggestion or the known list, the code. */
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { memberPath, optionNames, refuseUnknownOptions } from '../src/base/known-options.js';

const KNOWN = optionNames<{ port: number; host: string }>({ port: true, host: true });

describe('optionNames and memberPath', () => {
  it('lists the names, frozen', () => {
    expect(KNOWN).toEqual(['port', 'host']);
    expect(Object.isFrozen(KNOWN)).toBe(true);
  });

  it('writes a member path as code would', () => {
    expect(memberPath(undefined, 'port')).toBe('port');
    expect(memberPath('', 'port')).toBe('port');
    expect(memberPath('tls', 'cert')).toBe('tls.cert');
    expect(memberPath('claims', 'x-y')).toBe('claims["x-y"]');
  });
});

describe('refuseUnknownOptions', () => {
  it('accepts known names and anything that is not an options object', () => {
    expect(() => refuseUnknownOptions({ port: 1, host: 'h' }, KNOWN)).not.toThrow();
    for (const given of [undefined, null, 5, 'port', ['x']]) expect(() => refuseUnknownOptions(given, KNOWN)).not.toThrow();
  });

  it('refuses a misspelt name, suggesting the nearest under its path and owner', () => {
    expect(() => refuseUnknownOptions({ prot: 1 }, KNOWN, { path: 'metrics', owner: 'createJwtServer' })).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: 'metrics.prot',
        message: 'option metrics.prot: is not an option of createJwtServer; did you mean metrics.port?',
      }),
    );
  });

  it('lists the known names when none is near, and says none when there are none', () => {
    expect(() => refuseUnknownOptions({ tls: true }, KNOWN)).toThrow('option tls: is not an option; known: port, host');
    expect(() => refuseUnknownOptions({ a: 1 }, [])).toThrow('option a: is not an option; known: none');
  });

  it('says where a name belongs when the caller knows, and takes another code and noun', () => {
    const elsewhere = (name: string) => (name === 'workers' ? 'workers is an option of runCluster' : undefined);
    expect(() => refuseUnknownOptions({ workers: 2 }, KNOWN, { elsewhere })).toThrow(
      'option workers: is not an option; workers is an option of runCluster',
    );
    expect(() => refuseUnknownOptions({ kyes: [] }, ['keys'], { code: 'ERR_INVALID_KEY', noun: 'a JWK Set member' })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_KEY', message: 'kyes: is not a JWK Set member; did you mean keys?' }),
    );
  });
});

describe('which names an options object holds', () => {
  it('are those a factory reads: inherited, getter and non-enumerable names alike', () => {
    expect(() => refuseUnknownOptions(Object.create({ prot: 1 }), KNOWN)).toThrow(expect.objectContaining({ field: 'prot' }));
    expect(() => refuseUnknownOptions(Object.defineProperty({}, 'prot', { get: () => 1 }), KNOWN)).toThrow(/did you mean port\?/);
    expect(() => refuseUnknownOptions(Object.create(null, { prot: { value: 1 } }), KNOWN)).toThrow(/option prot:/);
  });

  it("stop at Object.prototype, of this realm or another, and leave a prototype's constructor out", () => {
    expect(() => refuseUnknownOptions(Object.create({ port: 1 }), KNOWN)).not.toThrow();
    expect(() => refuseUnknownOptions(runInNewContext('({ port: 1 })'), KNOWN)).not.toThrow();
    class Options {
      port = 1;
    }
    expect(() => refuseUnknownOptions(new Options(), KNOWN)).not.toThrow();
    expect(() => refuseUnknownOptions({ port: 1, constructor: 2 }, KNOWN)).toThrow(/option constructor:/);
  });
});
