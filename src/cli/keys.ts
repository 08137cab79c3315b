/**
 * `jwt-grpc keys`: make a key file, rotate its keys in phases, print its public keys.
 * What it prints names kids and algorithms, never key material; `public` prints public
 * keys only.
 */
import type { Algorithm } from '../algorithms/names.js';
import { JwtGrpcError } from '../base/errors.js';
import { exportKeys } from '../keys/export.js';
import { type KeyFileEntry, readKeyFileEntries, writeKeyFile } from '../keys/file.js';
import { newKid } from '../keys/generate.js';
import type { KeySet } from '../keys/key-set.js';
import { importKeyFile, loadKeys } from '../keys/load.js';
import { type KeyRotation, type KeyRotationStep, type NewKeyEntry, newPrivateKeyEntry, rotateKeyFileWith } from '../keys/rotate-file.js';
import { rfc3339 } from '../keys/rotation.js';
import { createStderrLogger, silentLogger } from '../base/log.js';
import { optionValue } from '../options/resolve.js';
import type { HandleTarget, KeysArgs } from './keys-args.js';
import { generateHandleEntry } from '../keys/backend.js';
import { registerBuiltinBackends } from '../keys/backends/index.js';
import { setPkcs11ModuleDirs } from '../keys/backends/pkcs11-custody.js';
import { pinSourceFrom } from '../keys/backends/pkcs11-uri.js';
import { dirname } from 'node:path';

type Print = (line: string) => void;

/**
 * A new private key for `alg` as a key file entry, under `kid` or a fresh one no entry of
 * `taken` has; a handle's is made for the key file `file`.
 */
async function newKeyEntry(
  alg: Algorithm,
  kid: string | undefined,
  taken: ReadonlySet<string>,
  file: string,
  handle?: HandleTarget,
): Promise<KeyFileEntry> {
  if (handle === undefined) return newPrivateKeyEntry(alg, kid, taken);
  let chosen = kid ?? newKid(alg);
  while (kid === undefined && taken.has(chosen)) chosen = newKid(alg);
  if (taken.has(chosen))
    throw new JwtGrpcError('ERR_INVALID_KEY', `the key file already has a key with kid ${JSON.stringify(chosen)}`, { field: chosen });
  // Made inside the HSM or KMS: the file gets the reference and the public key only.
  registerBuiltinBackends();
  // The reference is stored as given, and read now as it will be served: a relative pin-source is the key file's neighbour.
  const ref = handle.member === 'pkcs11' ? pinSourceFrom(handle.ref, dirname(file)) : handle.ref;
  const entry = await generateHandleEntry(handle.member, ref, alg, chosen, optionValue('keyBackendTimeoutMs', undefined));
  return { ...entry, [handle.member]: handle.ref };
}

function describe(keys: KeySet, kid: string): string {
  const info = keys.keys.find((key) => key.kid === kid);
  if (info === undefined) return kid;
  const role = info.active
    ? 'signs'
    : info.deactivatedAt !== undefined
      ? `verify-only since ${rfc3339(info.deactivatedAt)}`
      : 'verify-only';
  return `${kid} (${info.alg}, ${role})`;
}

async function generate(args: Extract<KeysArgs, { action: 'generate' }>, print: Print): Promise<void> {
  const entries: KeyFileEntry[] = [];
  for (const [index, alg] of args.algorithms.entries()) {
    entries.push(await newKeyEntry(alg, args.kids[index], new Set(entries.map((entry) => entry.kid)), args.out, args.handle));
  }
  await writeKeyFile(args.out, entries, { exclusive: !args.force });
  const keys = await loadKeys(args.out, { logger: silentLogger });
  print(`wrote ${args.out} (mode 0600): ${entries.map((entry) => describe(keys, entry.kid)).join(', ')}`);
}

/** How long after a key stopped signing its tokens may verify: the longest lifetime, and the leeway verifiers add to exp. */
function retireWaitSeconds(args: { readonly maxTtlSeconds: number }): number {
  return args.maxTtlSeconds + optionValue('clockToleranceSeconds', undefined);
}

/** The step `keys rotate` asked for, in rotateKeyFile's terms. */
function rotationStep(args: Extract<KeysArgs, { action: 'rotate' }>): KeyRotationStep {
  switch (args.phase) {
    case 'stage':
    case 'rotate':
      return { phase: args.phase, algorithm: args.alg as Algorithm, ...(args.kid === undefined ? {} : { kid: args.kid }) };
    case 'activate':
      return { phase: 'activate', kid: args.target as string };
    case 'retire':
      // The wait: the longest lifetime, and the leeway verifiers add to exp.
      return { phase: 'retire', kid: args.target as string, waitSeconds: retireWaitSeconds(args), force: args.force };
  }
}

async function rotate(args: Extract<KeysArgs, { action: 'rotate' }>, print: Print): Promise<void> {
  if (args.target !== undefined && args.alg !== undefined) {
    const current = await importKeyFile({ keys: await readKeyFileEntries(args.file, silentLogger) }, args.file, silentLogger);
    const targetAlg = current.keys.find((key) => key.kid === args.target)?.alg;
    if (targetAlg !== undefined && targetAlg !== args.alg)
      throw new JwtGrpcError('ERR_INVALID_KEY', `key ${args.target} is an ${targetAlg} key, not ${args.alg}`, { field: args.target });
  }
  const newEntry: NewKeyEntry = (alg, kid, taken) => newKeyEntry(alg, kid, taken, args.file, args.handle);
  const done = await rotateKeyFileWith(args.file, rotationStep(args), newEntry, createStderrLogger());
  for (const line of rotationReport(args, done)) print(line);
}

/** What `keys rotate` prints: what it did, and the next step. */
function rotationReport(args: Extract<KeysArgs, { action: 'rotate' }>, done: KeyRotation): string[] {
  const { kid, after } = done;
  switch (args.phase) {
    case 'stage':
      return [
        `staged ${describe(after, kid)} in ${args.file}`,
        `next: reload every server (SIGHUP, or --watch-keys notices), check GetJwks lists ${kid}, then:`,
        `  npx jwt-grpc keys rotate --keys ${args.file} --activate ${kid}`,
        ...(after.keys.find((key) => key.kid === kid)?.alg.startsWith('HS') === true
          ? ['HMAC keys are never published in GetJwks: only the servers sharing this file verify with it']
          : []),
      ];
    case 'rotate':
    case 'activate': {
      const lines = [`${args.phase === 'rotate' ? 'added' : 'activated'} ${describe(after, kid)} in ${args.file}`];
      if (done.deactivated === undefined) return lines;
      const retireAfter = rfc3339(Math.floor(Date.now() / 1000) + retireWaitSeconds(args));
      return [
        ...lines,
        `deactivated ${describe(after, done.deactivated)}`,
        `next: reload every server (SIGHUP, or --watch-keys notices); once its tokens have expired (after ${retireAfter} with --max-ttl ${args.maxTtlSeconds}):`,
        `  npx jwt-grpc keys rotate --keys ${args.file} --retire ${done.deactivated}`,
      ];
    }
    case 'retire':
      return [`retired ${describe(done.before, kid)} from ${args.file}`, 'next: reload every server (SIGHUP, or --watch-keys notices)'];
  }
}

/** Runs a `jwt-grpc keys` command; throws `JwtGrpcError` when it refuses or fails (the file then is unchanged). */
export async function runKeysCommand(args: Exclude<KeysArgs, { action: 'help' }>, print: Print): Promise<void> {
  setPkcs11ModuleDirs(args.pkcs11ModuleDirs);
  switch (args.action) {
    case 'generate':
      return generate(args, print);
    case 'rotate':
      return rotate(args, print);
    case 'public':
      print(JSON.stringify(exportKeys(await loadKeys(args.file, { logger: createStderrLogger() })), null, 2));
  }
}
