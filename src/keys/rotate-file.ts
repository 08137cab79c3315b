/**
 * A key file rotated in place, one phase a call: the steps `jwt-grpc keys rotate` takes
 * (stage, activate, retire, or stage and activate at once), as a function, so that code
 * rotates keys without editing their JSON. Each call reads the file, applies one phase
 * (src/keys/rotation.ts), checks that the result loads and signs every algorithm the file
 * signed, and only then rewrites it (mode 0600); a refusal leaves the file as it was.
 */
import { type Algorithm, isAlgorithm, ALGORITHMS } from '../algorithms/names.js';
import { JwtGrpcError } from '../base/errors.js';
import { optionNames, refuseUnknownOptions } from '../base/known-options.js';
import { type Logger, createStderrLogger, silentLogger } from '../base/log.js';
import { exportKeys } from './export.js';
import { type KeyFileEntry, readKeyFileEntries, writeKeyFile } from './file.js';
import { generateKeys, newKid } from './generate.js';
import type { KeySet } from './key-set.js';
import { importKeyFile } from './load.js';
import { checkKeyReplacement } from './replace.js';
import { activateKey, addActiveKey, retireKey, stageKey } from './rotation.js';

/**
 * One phase of a rotation, as `jwt-grpc keys rotate` names them (docs/keys.md, "Rotation"):
 * - `stage`: a new key of `algorithm` first in the file, verify-only, so every server and
 *   remote verifier publishes and knows it before any token carries its kid;
 * - `activate`: the key `kid` signs, and every other signer of its algorithm stops (verify-only, with `deactivated_at`);
 * - `rotate`: stage and activate at once (one server, nobody else to tell first);
 * - `retire`: `kid` leaves the file, refused while tokens it signed may be valid: until its
 *   `deactivated_at` plus `waitSeconds` (the longest token lifetime plus the verifiers'
 *   clock tolerance: 86405 with the defaults), unless `force`.
 *
 * @example
 * ```ts
 * const step: KeyRotationStep = { phase: 'stage', algorithm: 'ES256', kid: 'es256-2026-12' };
 * ```
 */
export type KeyRotationStep =
  | { readonly phase: 'stage' | 'rotate'; readonly algorithm: Algorithm; readonly kid?: string }
  | { readonly phase: 'activate'; readonly kid: string }
  | { readonly phase: 'retire'; readonly kid: string; readonly waitSeconds: number; readonly force?: boolean };

/**
 * What {@link rotateKeyFile} did: the key it staged, activated or retired, the signer it
 * deactivated, and the key sets before and after (as `loadKeys` reads them).
 *
 * @example
 * ```ts
 * const done: KeyRotation = await rotateKeyFile('keys.json', { phase: 'activate', kid: 'es256-2026-12' });
 * if (done.deactivated !== undefined) console.log(`retire ${done.deactivated} after its tokens expire`);
 * ```
 */
export interface KeyRotation {
  readonly kid: string;
  /** The key that signed the algorithm before and no longer does (activate, rotate). */
  readonly deactivated?: string;
  readonly before: KeySet;
  readonly after: KeySet;
}

/**
 * Options of {@link rotateKeyFile}.
 *
 * @example
 * ```ts
 * const options: RotateKeyFileOptions = { logger: silentLogger };
 * ```
 */
export interface RotateKeyFileOptions {
  /** Where a key file open to others is warned about. Default: stderr. */
  readonly logger?: Logger;
}

/** Makes the private key entry a staged or added key starts as, under a kid none of `taken` has. @internal */
export type NewKeyEntry = (algorithm: Algorithm, kid: string | undefined, taken: ReadonlySet<string>) => Promise<KeyFileEntry>;

const STEP_NAMES: Readonly<Record<KeyRotationStep['phase'], readonly string[]>> = {
  stage: ['phase', 'algorithm', 'kid'],
  rotate: ['phase', 'algorithm', 'kid'],
  activate: ['phase', 'kid'],
  retire: ['phase', 'kid', 'waitSeconds', 'force'],
};
const ROTATE_OPTION_NAMES = optionNames<RotateKeyFileOptions>({ logger: true });

/** A fresh private key of `algorithm`, made in memory, as `generateKeys` makes it. @internal */
export const newPrivateKeyEntry: NewKeyEntry = async (algorithm, kid, taken) => {
  let chosen = kid ?? newKid(algorithm);
  while (kid === undefined && taken.has(chosen)) chosen = newKid(algorithm);
  if (taken.has(chosen))
    throw new JwtGrpcError('ERR_INVALID_KEY', `the key file already has a key with kid ${JSON.stringify(chosen)}`, { field: chosen });
  const [jwk] = exportKeys(await generateKeys({ algorithms: [algorithm] }), { includePrivate: true }).keys;
  return { ...(jwk as KeyFileEntry), kid: chosen };
};

/**
 * Applies one phase of a rotation to the key file `file` and rewrites it (mode 0600): the
 * same steps as `jwt-grpc keys rotate`. Servers see the change on their next reload (SIGHUP,
 * `watchKeys`, or `setKeys(await loadKeys(file))`). Rejects with `ERR_INVALID_KEY`, the file
 * unchanged, when the phase is refused (an unknown kid, a key retired too early, a file
 * that would no longer sign an algorithm it signs now), and `ERR_INVALID_OPTION` on a bad step.
 *
 * @example
 * ```ts
 * const staged = await rotateKeyFile('keys.json', { phase: 'stage', algorithm: 'ES256' });
 * // ...every server reloaded, GetJwks lists staged.kid...
 * const activated = await rotateKeyFile('keys.json', { phase: 'activate', kid: staged.kid });
 * // ...once the old key's tokens have expired...
 * if (activated.deactivated !== undefined)
 *   await rotateKeyFile('keys.json', { phase: 'retire', kid: activated.deactivated, waitSeconds: 7200 + 5 });
 * ```
 */
export async function rotateKeyFile(file: string, step: KeyRotationStep, options: RotateKeyFileOptions = {}): Promise<KeyRotation> {
  refuseUnknownOptions(options, ROTATE_OPTION_NAMES, { owner: 'rotateKeyFile' });
  checkStep(step);
  return rotateKeyFileWith(file, step, newPrivateKeyEntry, options.logger ?? createStderrLogger());
}

function checkStep(step: KeyRotationStep): void {
  const known = STEP_NAMES[(step as { phase?: unknown })?.phase as KeyRotationStep['phase']];
  if (known === undefined) throw stepError('phase', `must be one of ${Object.keys(STEP_NAMES).join(', ')}`);
  refuseUnknownOptions(step, known, { path: 'step', owner: 'rotateKeyFile' });
  if ('algorithm' in step && !isAlgorithm(step.algorithm)) throw stepError('algorithm', `must be one of ${ALGORITHMS.join(', ')}`);
  if (step.kid !== undefined && (typeof step.kid !== 'string' || step.kid === '')) throw stepError('kid', 'must be a non-empty string');
  if (step.phase === 'retire' && !(Number.isSafeInteger(step.waitSeconds) && step.waitSeconds >= 0))
    throw stepError('waitSeconds', 'must be a whole number of seconds, 0 or more');
}

function stepError(name: string, problem: string): JwtGrpcError {
  return new JwtGrpcError('ERR_INVALID_OPTION', `option step.${name}: ${problem}`, { field: `step.${name}` });
}

/** {@link rotateKeyFile} with the new key made by `newEntry` (the CLI's makes HSM and KMS keys too). @internal */
export async function rotateKeyFileWith(file: string, step: KeyRotationStep, newEntry: NewKeyEntry, logger: Logger): Promise<KeyRotation> {
  // Warned about here; rewritten with mode 0600 once the rotation is done.
  const entries = await readKeyFileEntries(file, logger);
  const before = await importKeyFile({ keys: entries }, file, silentLogger);
  const nowSeconds = Math.floor(Date.now() / 1000);
  const taken = new Set(entries.map((entry) => entry.kid));
  let next: KeyFileEntry[];
  let kid = step.kid;
  switch (step.phase) {
    case 'stage':
    case 'rotate': {
      const jwk = await newEntry(step.algorithm, step.kid, taken);
      kid = jwk.kid;
      next = step.phase === 'stage' ? stageKey(entries, jwk) : addActiveKey(entries, jwk, before, nowSeconds);
      break;
    }
    case 'activate':
      next = activateKey(entries, step.kid, before, nowSeconds);
      break;
    case 'retire':
      next = retireKey(entries, step.kid, before, { nowSeconds, waitSeconds: step.waitSeconds, force: step.force === true });
      break;
  }
  // The new file must load, and sign every algorithm the old one signed, before it replaces it.
  const after = await importKeyFile({ keys: next }, file, silentLogger);
  const done = { kid: kid as string, before, after, ...deactivation(step, kid as string, before, after) };
  checkKeyReplacement(before, after);
  await writeKeyFile(file, next, { exclusive: false });
  return done;
}

/** For activate and rotate: the key must now sign, and the signer it replaced is named. */
function deactivation(step: KeyRotationStep, kid: string, before: KeySet, after: KeySet): { deactivated?: string } {
  if (step.phase !== 'activate' && step.phase !== 'rotate') return {};
  const alg = after.keys.find((key) => key.kid === kid)?.alg as Algorithm;
  if (after.activeEntry(alg)?.kid !== kid) {
    throw new JwtGrpcError('ERR_INVALID_KEY', `key ${kid} cannot sign: it has no private key (or secret)`, { field: kid });
  }
  const previous = before.activeEntry(alg)?.kid;
  return previous !== undefined && previous !== kid ? { deactivated: previous } : {};
}
