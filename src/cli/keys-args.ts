/**
 * `jwt-grpc keys generate | rotate | public`: their flags, parsed and documented from one
 * list. `--keys` and `--max-ttl` are the `serve` options of the same names (the option
 * table's bounds, default and environment twins), so a shell set up for the server
 * rotates its file.
 */
import { parseArgs } from 'node:util';
import { ALGORITHMS, type Algorithm, isAlgorithm } from '../algorithms/names.js';
import { invalidOption } from '../base/errors.js';
import { MAX_KID_LENGTH } from '../keys/key-set.js';
import { optionValue } from '../options/resolve.js';
import { OPTIONS, type OptionName } from '../options/table.js';
import { joinNegativeValues } from './negative-values.js';
import { parseArgsError, unknownCommand } from './parse-errors.js';
import { internalError } from '../base/assert.js';

/** The environment twin of a `serve` option these commands share. */
function envOf(name: OptionName): string {
  const env = OPTIONS[name].cli?.env;
  if (env === undefined) throw internalError(`option table: ${name} has no environment twin`);
  return env;
}

const KEYS_ENV = envOf('keys');
const MAX_TTL_ENV = envOf('maxTtlSeconds');
const MODULE_DIRS_ENV = envOf('pkcs11ModuleDirs');

/** Where a new key is made when it is not made in memory: inside an HSM (`--pkcs11 URI`) or AWS KMS (`--kms alias/NAME`). */
export interface HandleTarget {
  readonly member: 'pkcs11' | 'kms';
  readonly ref: string;
}

export type KeysArgs =
  | { readonly action: 'help' }
  | {
      readonly action: 'generate';
      readonly algorithms: readonly Algorithm[];
      readonly kids: readonly string[];
      readonly out: string;
      readonly force: boolean;
      readonly handle?: HandleTarget | undefined;
      readonly pkcs11ModuleDirs: readonly string[];
    }
  | {
      readonly action: 'rotate';
      readonly file: string;
      /** `rotate` without a phase flag: stage and activate at once. */
      readonly phase: 'rotate' | 'stage' | 'activate' | 'retire';
      /** The algorithm of the new key (rotate, stage), or the one the named key must have. */
      readonly alg: Algorithm | undefined;
      /** The new key's kid (rotate, stage), when given. */
      readonly kid: string | undefined;
      /** The key to activate or retire. */
      readonly target: string | undefined;
      readonly maxTtlSeconds: number;
      readonly force: boolean;
      /** rotate, stage: make the new key inside an HSM or KMS. */
      readonly handle?: HandleTarget | undefined;
      readonly pkcs11ModuleDirs: readonly string[];
    }
  | { readonly action: 'public'; readonly file: string; readonly pkcs11ModuleDirs: readonly string[] };

interface FlagSpec {
  readonly type: 'string' | 'boolean';
  readonly multiple?: true;
  readonly usage: string;
  readonly help: string;
}

const FLAGS: Readonly<Record<string, FlagSpec>> = {
  alg: {
    type: 'string',
    multiple: true,
    usage: '--alg ALG',
    help: `algorithm of the new key: ${ALGORITHMS.join(', ')} (generate: repeat for several keys)`,
  },
  kid: {
    type: 'string',
    multiple: true,
    usage: '--kid KID',
    help: 'kid of the new key (generate: one per --alg, in order); default ALG-DATE-RANDOM, e.g. es256-20261123-9f3a6c2e',
  },
  out: { type: 'string', usage: '--out FILE', help: 'the key file to write (mode 0600)' },
  keys: { type: 'string', usage: '--keys FILE', help: `the key file (env: ${KEYS_ENV})` },
  stage: {
    type: 'boolean',
    usage: '--stage',
    help: 'add a new key as verify-only: published by every server that reloads, signing nothing',
  },
  activate: {
    type: 'string',
    usage: '--activate KID',
    help: 'make a staged key the signer of its algorithm; its old signer becomes verify-only, stamped deactivated_at',
  },
  retire: { type: 'string', usage: '--retire KID', help: 'remove a deactivated key once the tokens it signed have expired' },
  'max-ttl': {
    type: 'string',
    usage: '--max-ttl SECONDS',
    help: `the servers' longest token lifetime, for --retire's check (default ${optionValue('maxTtlSeconds', undefined)}; env: ${MAX_TTL_ENV})`,
  },
  force: { type: 'boolean', usage: '--force', help: 'generate: replace an existing file; --retire: skip the expiry check' },
  pkcs11: {
    type: 'string',
    usage: '--pkcs11 URI',
    help: 'make the new key inside an HSM: an RFC 7512 URI with object= and module-path=; the PIN from pin-source=file:PATH or JWT_GRPC_PKCS11_PIN',
  },
  kms: {
    type: 'string',
    usage: '--kms alias/NAME',
    help: 'make the new key inside AWS KMS under this alias (AWS_REGION, credentials, AWS_ENDPOINT_URL apply)',
  },
  'pkcs11-module-dirs': {
    type: 'string',
    usage: '--pkcs11-module-dirs DIR:DIR',
    help: `the directories a PKCS#11 module-path may name, as for serve (default the system's PKCS#11 module directories; env: ${MODULE_DIRS_ENV})`,
  },
};

const ACTIONS = {
  generate: ['alg', 'kid', 'out', 'force', 'pkcs11', 'kms', 'pkcs11-module-dirs'],
  rotate: ['keys', 'alg', 'kid', 'stage', 'activate', 'retire', 'max-ttl', 'force', 'pkcs11', 'kms', 'pkcs11-module-dirs'],
  public: ['keys', 'pkcs11-module-dirs'],
} as const;

type Action = keyof typeof ACTIONS;

/** The help of `jwt-grpc keys`. */
export function keysHelpText(): string {
  const line = (name: string): string => {
    const flag = FLAGS[name] as FlagSpec;
    return `  ${flag.usage.padEnd(20)} ${flag.help}`;
  };
  return [
    'Usage:',
    '  jwt-grpc keys generate --alg ALG [--alg ALG ...] [--kid KID ...] --out FILE [--force]',
    '  jwt-grpc keys generate --alg ALG --pkcs11 URI | --kms alias/NAME --out FILE   the key made inside the HSM or KMS; FILE gets its reference and public key',
    '      a JWK Set of new private keys, mode 0600; prints the kids',
    '  jwt-grpc keys rotate --keys FILE --alg ALG [--kid KID]         stage and activate a new key at once (one server)',
    '  jwt-grpc keys rotate --keys FILE --alg ALG --stage [--kid KID] phase 1: a new verify-only key',
    '  jwt-grpc keys rotate --keys FILE --activate KID                phase 2: it signs',
    '  jwt-grpc keys rotate --keys FILE --retire KID [--max-ttl S]    phase 3: the old key goes',
    '      the file is replaced atomically, mode 0600; reload the servers after each phase (SIGHUP or --watch-keys)',
    '  jwt-grpc keys public --keys FILE',
    '      the public JWK Set (what GetJwks serves: HMAC keys are never published)',
    '',
    'Flags:',
    ...Object.keys(FLAGS).map(line),
    '',
    'Exit codes: 0 done, 1 refused or failed (the message says why; the file is unchanged), 2 bad option.',
    '',
  ].join('\n');
}

function algorithm(value: string): Algorithm {
  if (!isAlgorithm(value)) throw invalidOption('--alg', `must be one of ${ALGORITHMS.join(', ')}, got ${JSON.stringify(value)}`);
  return value;
}

function kidText(value: string): string {
  if (value.length === 0 || value.length > MAX_KID_LENGTH) throw invalidOption('--kid', `must be 1 to ${MAX_KID_LENGTH} characters`);
  return value;
}

function required(value: string | undefined, flag: string, env?: string): string {
  if (value === undefined || value === '') throw invalidOption(flag, `is required${env === undefined ? '' : ` (or ${env})`}`);
  return value;
}

/** `--pkcs11 URI` or `--kms alias/NAME`, at most one. */
function handleTarget(values: Record<string, unknown>): HandleTarget | undefined {
  const pkcs11 = values['pkcs11'] as string | undefined;
  const kms = values['kms'] as string | undefined;
  if (pkcs11 !== undefined && kms !== undefined) throw invalidOption('--pkcs11/--kms', 'give one');
  if (pkcs11 !== undefined) return { member: 'pkcs11', ref: required(pkcs11, '--pkcs11') };
  if (kms !== undefined) return { member: 'kms', ref: required(kms, '--kms') };
  return undefined;
}

/** `--pkcs11-module-dirs`, else its environment twin, else the `serve` option's default. */
function moduleDirs(flag: string | undefined, env: NodeJS.ProcessEnv): readonly string[] {
  const text = flag ?? (env[MODULE_DIRS_ENV] || undefined);
  const label = flag === undefined ? MODULE_DIRS_ENV : '--pkcs11-module-dirs';
  return text === undefined ? optionValue('pkcs11ModuleDirs', undefined) : OPTIONS.pkcs11ModuleDirs.kind.parse(text, label);
}

/** Parses `jwt-grpc keys ...` (argv after `keys`); throws `ERR_INVALID_OPTION` naming the flag. */
export function parseKeysArgs(argv: readonly string[], env: NodeJS.ProcessEnv): KeysArgs {
  const [action, ...rest] = argv;
  if (action === undefined || action === '--help' || action === '-h' || action === 'help') return { action: 'help' };
  if (!(action in ACTIONS)) throw unknownCommand(action, Object.keys(ACTIONS), 'keys command');
  const allowed: readonly string[] = ACTIONS[action as Action];
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    const options = Object.fromEntries(
      allowed.map((name) => [name, { type: FLAGS[name]?.type ?? 'string', multiple: FLAGS[name]?.multiple === true }]),
    );
    values = parseArgs({
      args: joinNegativeValues(rest, options),
      options: { ...options, help: { type: 'boolean' } },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    throw parseArgsError(err, [...allowed, 'help'], `jwt-grpc keys ${action}`);
  }
  if (values['help'] === true) return { action: 'help' };
  const algs = ((values['alg'] as string[] | undefined) ?? []).map(algorithm);
  const kids = ((values['kid'] as string[] | undefined) ?? []).map(kidText);
  const force = values['force'] === true;
  const keysFile = (): string => required((values['keys'] as string | undefined) ?? env[KEYS_ENV], '--keys', KEYS_ENV);
  const handle = handleTarget(values);
  const pkcs11ModuleDirs = moduleDirs(values['pkcs11-module-dirs'] as string | undefined, env);
  if (handle !== undefined && algs.length > 1) throw invalidOption(`--${handle.member}`, 'names one key: give one --alg');

  switch (action as Action) {
    case 'generate': {
      if (algs.length === 0) throw invalidOption('--alg', 'is required: the algorithm of each key to generate');
      if (new Set(algs).size !== algs.length) throw invalidOption('--alg', 'names an algorithm twice');
      if (kids.length > 0 && kids.length !== algs.length) throw invalidOption('--kid', `give one per --alg (${algs.length}), or none`);
      if (new Set(kids).size !== kids.length) throw invalidOption('--kid', 'names a kid twice');
      const out = required(values['out'] as string | undefined, '--out');
      return { action: 'generate', algorithms: algs, kids, out, force, handle, pkcs11ModuleDirs };
    }
    case 'rotate': {
      const stage = values['stage'] === true;
      const activate = values['activate'] as string | undefined;
      const retire = values['retire'] as string | undefined;
      const phases = [stage, activate !== undefined, retire !== undefined].filter(Boolean).length;
      if (phases > 1) throw invalidOption('--stage/--activate/--retire', 'give one phase at a time');
      const phase = stage ? 'stage' : activate !== undefined ? 'activate' : retire !== undefined ? 'retire' : 'rotate';
      const makesKey = phase === 'rotate' || phase === 'stage';
      if (algs.length > 1) throw invalidOption('--alg', 'give one algorithm');
      if (makesKey && algs.length === 0) throw invalidOption('--alg', 'is required: the algorithm of the new key');
      if (kids.length > 1 || (kids.length === 1 && !makesKey)) throw invalidOption('--kid', 'names the one new key of rotate or --stage');
      if (handle !== undefined && !makesKey) throw invalidOption(`--${handle.member}`, 'makes a new key: give it to rotate or --stage');
      if (phase !== 'retire' && (values['max-ttl'] !== undefined || force)) {
        throw invalidOption(values['max-ttl'] !== undefined ? '--max-ttl' : '--force', 'applies to --retire only');
      }
      const maxTtlText = (values['max-ttl'] as string | undefined) ?? (env[MAX_TTL_ENV] || undefined);
      const maxTtlSeconds =
        maxTtlText === undefined ? optionValue('maxTtlSeconds', undefined) : OPTIONS.maxTtlSeconds.kind.parse(maxTtlText, '--max-ttl');
      return {
        action: 'rotate',
        file: keysFile(),
        phase,
        alg: algs[0],
        kid: kids[0],
        target: activate ?? retire,
        maxTtlSeconds,
        force,
        handle,
        pkcs11ModuleDirs,
      };
    }
    case 'public':
      return { action: 'public', file: keysFile(), pkcs11ModuleDirs };
  }
}
