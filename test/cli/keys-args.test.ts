/**
 * `jwt-grpc keys` flags (src/cli/keys-args.ts): generate, rotate in its phases and public,
 * parsed without touching a file; each refusal an ERR_INVALID_OPTION naming the flag.
 */
import { describe, expect, it } from 'vitest';
import { keysHelpText, parseKeysArgs } from '../../src/cli/keys-args.js';
import { PKCS11_MODULE_DIRS } from '../../src/keys/backends/pkcs11-custody.js';

function refusal(argv: string[], env: NodeJS.ProcessEnv = {}): string {
  try {
    parseKeysArgs(argv, env);
  } catch (err) {
    expect((err as { code: string }).code).toBe('ERR_INVALID_OPTION');
    return (err as Error).message;
  }
  throw new Error('accepted');
}

describe('parseKeysArgs: generate', () => {
  it('reads one or several keys, with or without kids, and a handle', () => {
    expect(
      parseKeysArgs(['generate', '--alg', 'ES256', '--alg', 'HS256', '--kid', 'a', '--kid', 'b', '--out', 'k.json', '--force'], {}),
    ).toEqual({
      action: 'generate',
      algorithms: ['ES256', 'HS256'],
      kids: ['a', 'b'],
      out: 'k.json',
      force: true,
      handle: undefined,
      pkcs11ModuleDirs: PKCS11_MODULE_DIRS,
    });
    expect(parseKeysArgs(['generate', '--alg', 'ES256', '--kms', 'alias/jwt', '--out', 'k.json'], {})).toMatchObject({
      handle: { member: 'kms', ref: 'alias/jwt' },
      kids: [],
    });
  });

  it.each([
    [['generate', '--out', 'k'], 'option --alg: is required: the algorithm of each key to generate'],
    [
      ['generate', '--alg', 'es256', '--out', 'k'],
      'option --alg: must be one of HS256, HS384, HS512, ES256, ES384, RS256, PS256, EdDSA, got "es256"',
    ],
    [['generate', '--alg', 'ES256', '--alg', 'ES256', '--out', 'k'], 'option --alg: names an algorithm twice'],
    [['generate', '--alg', 'ES256', '--alg', 'HS256', '--kid', 'a', '--out', 'k'], 'option --kid: give one per --alg (2), or none'],
    [['generate', '--alg', 'ES256', '--alg', 'HS256', '--kid', 'a', '--kid', 'a', '--out', 'k'], 'option --kid: names a kid twice'],
    [['generate', '--alg', 'ES256', '--kid', '', '--out', 'k'], 'option --kid: must be 1 to 256 characters'],
    [['generate', '--alg', 'ES256', '--kid', 'x'.repeat(257), '--out', 'k'], 'option --kid: must be 1 to 256 characters'],
    [['generate', '--alg', 'ES256'], 'option --out: is required'],
    [
      ['generate', '--alg', 'ES256', '--alg', 'HS256', '--pkcs11', 'pkcs11:object=a', '--out', 'k'],
      'option --pkcs11: names one key: give one --alg',
    ],
    [['generate', '--alg', 'ES256', '--pkcs11', 'p', '--kms', 'k', '--out', 'k'], 'option --pkcs11/--kms: give one'],
    [['generate', '--alg', 'ES256', '--kms', '', '--out', 'k'], 'option --kms: is required'],
  ])('refuses %j', (argv, message) => {
    expect(refusal(argv)).toBe(message);
  });
});

describe('parseKeysArgs: rotate', () => {
  it('reads each phase, the key file from --keys or its variable, and --max-ttl for retire', () => {
    expect(parseKeysArgs(['rotate', '--keys', 'k.json', '--alg', 'ES256', '--kid', 'n'], {})).toMatchObject({
      action: 'rotate',
      file: 'k.json',
      phase: 'rotate',
      alg: 'ES256',
      kid: 'n',
    });
    expect(parseKeysArgs(['rotate', '--alg', 'ES256', '--stage'], { JWT_GRPC_KEYS: 'env.json' })).toMatchObject({
      phase: 'stage',
      file: 'env.json',
    });
    expect(parseKeysArgs(['rotate', '--keys', 'k', '--activate', 'n'], {})).toMatchObject({
      phase: 'activate',
      target: 'n',
      alg: undefined,
    });
    expect(parseKeysArgs(['rotate', '--keys', 'k', '--retire', 'o', '--max-ttl', '600', '--force'], {})).toMatchObject({
      phase: 'retire',
      target: 'o',
      maxTtlSeconds: 600,
      force: true,
    });
    expect(parseKeysArgs(['rotate', '--keys', 'k', '--retire', 'o'], { JWT_GRPC_MAX_TTL: '900' })).toMatchObject({ maxTtlSeconds: 900 });
    expect(parseKeysArgs(['rotate', '--keys', 'k', '--retire', 'o'], { JWT_GRPC_MAX_TTL: '' })).toMatchObject({ maxTtlSeconds: 86_400 });
  });

  it.each([
    [['rotate', '--alg', 'ES256'], 'option --keys: is required (or JWT_GRPC_KEYS)'],
    [['rotate', '--keys', 'k', '--stage', '--activate', 'a'], 'option --stage/--activate/--retire: give one phase at a time'],
    [['rotate', '--keys', 'k'], 'option --alg: is required: the algorithm of the new key'],
    [['rotate', '--keys', 'k', '--alg', 'ES256', '--alg', 'HS256'], 'option --alg: give one algorithm'],
    [['rotate', '--keys', 'k', '--activate', 'a', '--kid', 'b'], 'option --kid: names the one new key of rotate or --stage'],
    [['rotate', '--keys', 'k', '--retire', 'a', '--kms', 'alias/x'], 'option --kms: makes a new key: give it to rotate or --stage'],
    [['rotate', '--keys', 'k', '--alg', 'ES256', '--force'], 'option --force: applies to --retire only'],
    [['rotate', '--keys', 'k', '--alg', 'ES256', '--max-ttl', '60'], 'option --max-ttl: applies to --retire only'],
  ])('refuses %j', (argv, message) => {
    expect(refusal(argv)).toBe(message);
  });

  it('checks --max-ttl as the servers do', () => {
    expect(refusal(['rotate', '--keys', 'k', '--retire', 'o', '--max-ttl', '-1'])).toMatch(/^option --max-ttl: /);
  });
});

describe('parseKeysArgs: --pkcs11-module-dirs', () => {
  it('reads the directories from the flag, else its variable, as serve does; the flag wins', () => {
    const env = { JWT_GRPC_PKCS11_MODULE_DIRS: '/opt/env/lib' };
    expect(parseKeysArgs(['public', '--keys', 'k', '--pkcs11-module-dirs', '/opt/hsm/lib:/usr/lib/softhsm'], env)).toMatchObject({
      pkcs11ModuleDirs: ['/opt/hsm/lib', '/usr/lib/softhsm'],
    });
    expect(parseKeysArgs(['rotate', '--keys', 'k', '--activate', 'a'], env)).toMatchObject({ pkcs11ModuleDirs: ['/opt/env/lib'] });
    expect(parseKeysArgs(['generate', '--alg', 'ES256', '--out', 'k'], { JWT_GRPC_PKCS11_MODULE_DIRS: '' })).toMatchObject({
      pkcs11ModuleDirs: PKCS11_MODULE_DIRS,
    });
  });

  it.each([
    [
      ['public', '--keys', 'k', '--pkcs11-module-dirs', 'lib/softhsm'],
      'option --pkcs11-module-dirs: entry 0 must be an absolute directory',
    ],
    [
      ['public', '--keys', 'k', '--pkcs11-module-dirs', '/usr/lib:/opt/../tmp'],
      'option --pkcs11-module-dirs: entry 1 must be an absolute directory',
    ],
    [['public', '--keys', 'k', '--pkcs11-module-dirs', '/opt/hsm/'], 'option --pkcs11-module-dirs: entry 0 must be an absolute directory'],
  ])('refuses %j, naming the flag and the entry', (argv, message) => {
    expect(refusal(argv)).toContain(message);
  });

  it('names the variable when the directories came from it', () => {
    expect(refusal(['public', '--keys', 'k'], { JWT_GRPC_PKCS11_MODULE_DIRS: 'relative' })).toMatch(
      /^option JWT_GRPC_PKCS11_MODULE_DIRS: entry 0 must be an absolute directory/,
    );
  });
});

describe('parseKeysArgs: commands and help', () => {
  it('reads public, answers help, and refuses an unknown command or a flag of another command', () => {
    expect(parseKeysArgs(['public', '--keys', 'k.json'], {})).toEqual({
      action: 'public',
      file: 'k.json',
      pkcs11ModuleDirs: PKCS11_MODULE_DIRS,
    });
    for (const argv of [[], ['help'], ['-h'], ['--help'], ['rotate', '--help']])
      expect(parseKeysArgs(argv, {})).toEqual({ action: 'help' });
    expect(refusal(['list'])).toBe('unknown keys command "list"; the commands are generate, rotate, public');
    expect(refusal(['public', '--keys', 'k', '--alg', 'ES256'])).toBe('option --alg: is not a flag of jwt-grpc keys public');
  });

  it('documents every flag', () => {
    const help = keysHelpText();
    for (const flag of [
      '--alg ALG',
      '--kid KID',
      '--out FILE',
      '--keys FILE',
      '--stage',
      '--activate KID',
      '--retire KID',
      '--max-ttl SECONDS',
      '--force',
      '--pkcs11 URI',
      '--kms alias/NAME',
      '--pkcs11-module-dirs DIR:DIR',
    ]) {
      expect(help).toContain(`  ${flag}`);
    }
  });
});
