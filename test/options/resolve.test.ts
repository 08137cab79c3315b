/**
 * Options resolved through the table (src/options/resolve.ts): a value left out takes the
 * row's default, a value given is checked by the row's kind, and a refusal names the option
 * as its reader wrote it (the library's name, or the CLI's flag or variable).
 */
import { describe, expect, it } from 'vitest';
import { cliLabel, defaultText, libraryLabel, namesIn, optionValue, resolveGroups, resolveOptions } from '../../src/options/resolve.js';
import { OPTIONS } from '../../src/options/table.js';

describe('labels', () => {
  it('name an option as the library or the CLI spells it', () => {
    expect(libraryLabel('maxTtlSeconds')).toBe('maxTtlSeconds');
    expect(cliLabel('maxTtlSeconds')).toBe('--max-ttl');
    expect(cliLabel('jti')).toBe('--no-jti');
    expect(cliLabel('clockToleranceSeconds'), 'no CLI spelling: the library name').toBe('clockToleranceSeconds');
  });
});

describe('namesIn', () => {
  it('lists exactly the options of a group, in table order', () => {
    const service = namesIn('service');
    expect(service).toContain('maxTtlSeconds');
    expect(service).not.toContain('keys');
    expect(service).toEqual(Object.keys(OPTIONS).filter((name) => OPTIONS[name as keyof typeof OPTIONS].group === 'service'));
  });
});

describe('optionValue', () => {
  it('takes the default for a value left out, and undefined where there is none', () => {
    expect(optionValue('maxTtlSeconds', undefined)).toBe(86_400);
    expect(optionValue('maxTtlSeconds', null)).toBe(86_400);
    expect(optionValue('maxTtlSeconds', 60)).toBe(60);
    expect(optionValue('issuer', undefined)).toBeUndefined();
  });

  it('refuses a bad value, naming the option as labelled', () => {
    expect(() => optionValue('maxTtlSeconds', 0)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', message: expect.stringMatching(/^option maxTtlSeconds: /) }),
    );
    expect(() => optionValue('maxTtlSeconds', '60', '--max-ttl')).toThrow(
      expect.objectContaining({ message: expect.stringMatching(/^option --max-ttl: /) }),
    );
  });
});

describe('resolveOptions', () => {
  it('resolves every option of the group, given or defaulted, and ignores other groups’ names', () => {
    const resolved = resolveOptions('service', { maxTtlSeconds: 120, keys: 'ignored here' });
    expect(resolved.maxTtlSeconds).toBe(120);
    expect(resolved.defaultTtlSeconds).toBe(7200);
    expect(resolved.jti).toBe(true);
    expect(Object.keys(resolved).sort()).toEqual([...namesIn('service')].sort());
  });

  it('names a refused option with the label given', () => {
    expect(() => resolveOptions('service', { defaultTtlSeconds: -1 }, cliLabel)).toThrow(/^option --ttl: /);
  });
});

describe('defaultText', () => {
  it('shows the default as the docs and --help print it', () => {
    expect(defaultText('keys')).toBe('ephemeral keys, with a warning');
    expect(defaultText('issuer')).toBe('none');
    expect(defaultText('maxTtlSeconds')).toBe(OPTIONS.maxTtlSeconds.kind.show(86_400));
  });
});

describe('resolveGroups', () => {
  it('reads a factory’s options in one pass: each group resolved, defaults filled in, and the names it also takes let through', () => {
    const { service, transport } = resolveGroups(
      ['service', 'transport'],
      { keys: 'read by the factory', maxTtlSeconds: 60 },
      { also: ['keys'] },
    );
    expect(service.maxTtlSeconds).toBe(60);
    expect(service.defaultTtlSeconds).toBe(OPTIONS.defaultTtlSeconds.default);
    expect(transport.transport).toBe(OPTIONS.transport.default);
  });

  it('refuses a name of no group before it checks any value, and a non-object, naming the owner and the path', () => {
    expect(() => resolveGroups(['service'], { maxTtlSeconds: -1, maxTtlSecond: 5 }, { owner: 'addJwtService' })).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: 'maxTtlSecond',
        message: expect.stringContaining('of addJwtService; did you mean maxTtlSeconds?'),
      }),
    );
    // A transport option is no service option: refused for a factory that reads the service group only.
    expect(() => resolveGroups(['service'], { transport: 'grpc-js' })).toThrow(expect.objectContaining({ field: 'transport' }));
    expect(() => resolveGroups(['service'], 'options', { path: 'server' })).toThrow('option server: must be an object');
    expect(() => resolveGroups(['service'], { maxTtlSeconds: -1 }, { label: (name) => `--${name}` })).toThrow(/option --maxTtlSeconds:/);
  });

  it('takes only the options `only` names of a group: the rest of it refused, and left out of the result', () => {
    const only = { server: ['statusList', 'revocations'] as const };
    const { server } = resolveGroups(['service', 'server'], { revocations: '/tmp/r.jsonl' }, { only });
    expect(server).toEqual({ statusList: OPTIONS.statusList.default, revocations: '/tmp/r.jsonl' });
    expect(() => resolveGroups(['service', 'server'], { metricsPort: 9464 }, { only, owner: 'addJwtService' })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'metricsPort' }),
    );
  });
});
