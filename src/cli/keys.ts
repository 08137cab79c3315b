/**
 * `jwt-grpc keys`: make a key file, rotate its keys in phases, print its public keys.
 * What it prints names kids and algorithms, never key material; `public` prints public
 * keys only.
 */
import type { Algorithm } from '../algorithms/names.js';
import { JwtGrpcError } from '../base/errors.js';
import { exportKeys } from '../keys/export.js';
import { type KeyFileEntry, readKeyFileEntries, writeKeyFile } from '../keys/file.js';
import { generateKeys, newKid } from '../keys/generate.js';
import type { KeySet } from '../keys/key-set.js';
import { importKeyFile, loadKeys } from '../keys/load.js';
import { checkKeyReplacement } from '../keys/replace.js';
import { activateKey, addActiveKey, retireKey, rfc3339, stageKey } from '../keys/rotation.js';
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
  let chosen = kid ?? newKid(alg);
  while (kid === undefined && taken.has(chosen)) chosen = newKid(alg);
  if (taken.has(chosen))
    throw new JwtGrpcError('ERR_INVALID_KEY', `the key file already has a key with kid ${JSON.stringify(chosen)}`, { field: chosen });
  // Made inside the HSM or KMS: the file gets the reference and the public key only.
  if (handle !== undefined) {
    registerBuiltinBackends();
    // The reference is stored as given, and read now as it will be served: a relative pin-source is the key file's neighbour.
    const ref = handle.member === 'pkcs11' ? pinSourceFrom(handle.ref, dirname(file)) : handle.ref;
    const entry = await generateHandleEntry(handle.member, ref, alg, chosen, optionValue('keyBackendTimeoutMs', undefined));
    return { ...entry, [handle.member]: handle.ref };
  }
  const [jwk] = exportKeys(await generateKeys({ algorithms: [alg] }), { includePrivate: true }).keys;
  return { ...(jwk as KeyFileEntry), kid: chosen };
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

async function rotate(args: Extract<KeysArgs, { action: 'rotate' }>, print: Print): Promise<void> {
  // Warned about here; rewritten with mode 0600 below once the rotation is done.
  const entries = await readKeyFileEntries(args.file, createStderrLogger());
  const current = await importKeyFile({ keys: entries }, args.file, silentLogger);
  const nowSeconds = Math.floor(Date.now() / 1000);
  const taken = new Set(entries.map((entry) => entry.kid));
  const targetAlg = args.target === undefined ? undefined : current.keys.find((key) => key.kid === args.target)?.alg;
  if (args.alg !== undefined && targetAlg !== undefined && targetAlg !== args.alg) {
    throw new JwtGrpcError('ERR_INVALID_KEY', `key ${args.target} is an ${targetAlg} key, not ${args.alg}`, { field: args.target });
  }
  // The wait before --retire: the longest lifetime, and the leeway verifiers add to exp.
  const waitSeconds = args.maxTtlSeconds + optionValue('clockToleranceSeconds', undefined);

  let next: KeyFileEntry[];
  let done: (keys: KeySet) => string[];
  const signerOf = (alg: Algorithm): string | undefined => current.activeEntry(alg)?.kid;
  switch (args.phase) {
    case 'stage': {
      const jwk = await newKeyEntry(args.alg as Algorithm, args.kid, taken, args.file, args.handle);
      next = stageKey(entries, jwk);
      done = (keys) => [
        `staged ${describe(keys, jwk.kid)} in ${args.file}`,
        `next: reload every server (SIGHUP, or --watch-keys notices), check GetJwks lists ${jwk.kid}, then:`,
        `  npx jwt-grpc keys rotate --keys ${args.file} --activate ${jwk.kid}`,
        ...(jwk['kty'] === 'oct' ? ['HMAC keys are never published in GetJwks: only the servers sharing this file verify with it'] : []),
      ];
      break;
    }
    case 'rotate':
    case 'activate': {
      let kid: string;
      if (args.phase === 'rotate') {
        const jwk = await newKeyEntry(args.alg as Algorithm, args.kid, taken, args.file, args.handle);
        kid = jwk.kid;
        next = addActiveKey(entries, jwk, current, nowSeconds);
      } else {
        kid = args.target as string;
        next = activateKey(entries, kid, current, nowSeconds);
      }
      const alg = (targetAlg ?? args.alg) as Algorithm;
      const previous = signerOf(alg);
      done = (keys) => {
        if (keys.activeEntry(alg)?.kid !== kid) {
          throw new JwtGrpcError('ERR_INVALID_KEY', `key ${kid} cannot sign: it has no private key (or secret)`, { field: kid });
        }
        const lines = [`${args.phase === 'rotate' ? 'added' : 'activated'} ${describe(keys, kid)} in ${args.file}`];
        if (previous !== undefined && previous !== kid) {
          lines.push(
            `deactivated ${describe(keys, previous)}`,
            'next: reload every server (SIGHUP, or --watch-keys notices); once its tokens have expired ' +
              `(after ${rfc3339(nowSeconds + waitSeconds)} with --max-ttl ${args.maxTtlSeconds}):`,
            `  npx jwt-grpc keys rotate --keys ${args.file} --retire ${previous}`,
          );
        }
        return lines;
      };
      break;
    }
    case 'retire': {
      const kid = args.target as string;
      const before = describe(current, kid);
      next = retireKey(entries, kid, current, { nowSeconds, waitSeconds, force: args.force });
      done = () => [`retired ${before} from ${args.file}`, 'next: reload every server (SIGHUP, or --watch-keys notices)'];
      break;
    }
  }
  // The new file must load, and sign every algorithm the old one signed, before it replaces it.
  const keys = await importKeyFile({ keys: next }, args.file, silentLogger);
  const lines = done(keys);
  checkKeyReplacement(current, keys);
  await writeKeyFile(args.file, next, { exclusive: false });
  for (const line of lines) print(line);
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
