import type { Buffer } from 'node:buffer';
import { basename, dirname, resolve } from 'node:path';
import { JwtGrpcError } from '../base/errors.js';
import { type Logger, createStderrLogger } from '../base/log.js';
import { readSecretFile } from '../base/secret-file.js';
import { importKeys, keyMembers } from './import.js';
import { jsonErrorPosition } from './json-position.js';
import { pinSourceFrom } from './backends/pkcs11-uri.js';
import type { KeySet } from './key-set.js';
import { optionNames, refuseUnknownOptions } from '../base/known-options.js';
import { keyBackendTimeoutOption } from './backend.js';

/** The names loadKeys' options hold. */
const LOAD_OPTION_NAMES = optionNames<LoadKeysOptions>({ logger: true, keyBackendTimeoutMs: true });

/**
 * How {@link loadKeys} reads a key file and opens its keys held by an HSM or a KMS.
 *
 * @example
 * ```ts
 * const options: LoadKeysOptions = { keyBackendTimeoutMs: 5000 };
 * const keys = await loadKeys('keys.json', options);
 * ```
 */
export interface LoadKeysOptions {
  /** Where warnings go (a key file open to others); stderr by default. */
  readonly logger?: Logger;
  /**
   * How long each call that opens a key held by an HSM or a KMS may take (the public key,
   * the check signature), 1 to 60000 ms; a backend that does not answer stops the load with
   * an error naming the kid. Default 2000, as the server's option of the same name.
   */
  readonly keyBackendTimeoutMs?: number;
}

/**
 * Whether a key file's text names a PKCS#11 key, whose module this process would load: such
 * a file open to others is refused rather than warned about. Read from the parsed JSON, as the
 * loader reads it (`"pkcs\u0031\u0031"` is `"pkcs11"` too); text that does not parse names none. @internal
 */
export function namesPkcs11Module(content: Buffer): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content.toString('utf8'));
  } catch {
    return false;
  }
  const list = typeof parsed === 'object' && parsed !== null ? (parsed as { keys?: unknown }).keys : undefined;
  return Array.isArray(list) && list.some((entry) => typeof entry === 'object' && entry !== null && Object.hasOwn(entry, 'pkcs11'));
}

/**
 * Reads a key or PEM file; warns, as ssh does, when one holding secrets is open to group,
 * others or another user, and refuses a key file naming a PKCS#11 module that is.
 */
async function readKeyFile(path: string, logger: Logger, holdsSecrets: (text: string) => boolean, field = path): Promise<string> {
  try {
    // The key file itself (a PEM file it names holds no module-path).
    const runsCode = field === path ? namesPkcs11Module : undefined;
    return (await readSecretFile(path, 'key file', logger, (content) => holdsSecrets(content.toString('utf8')), runsCode)).toString('utf8');
  } catch (err) {
    if (err instanceof JwtGrpcError) throw err;
    // A pemFile is named by its place in the key file: its value, read from the file, is not repeated (a secret pasted there would be).
    const what = field === path ? `key file ${path}` : `the file ${field} names`;
    throw new JwtGrpcError('ERR_FILE', `cannot read ${what}: ${(err as NodeJS.ErrnoException).code ?? err}`, { field, cause: err });
  }
}

/** A PEM block's first line: what a PEM file given as the key file starts with. */
const PEM_BEGIN = /^\s*-----BEGIN ([A-Z0-9 ]{1,40})-----/;

/**
 * Parses a key file's text; the error names the file and position, never the text (it may
 * hold secrets). A PEM file given where the key file goes is said so, with the key file that
 * names it (its `BEGIN` line is the only part of it repeated). @internal
 */
export function parseKeyFileText(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const pem = PEM_BEGIN.exec(text)?.[1];
    if (pem !== undefined) {
      const entry = JSON.stringify({ keys: [{ kid: 'KID', alg: 'ALG', pemFile: basename(file) }] });
      throw new JwtGrpcError(
        'ERR_FILE',
        `key file ${file} is a PEM file (${pem}), not a JSON JWK Set: name it from a key file beside it, ${entry} (docs/keys.md)`,
        { field: file },
      );
    }
    throw new JwtGrpcError('ERR_FILE', `key file ${file} is not valid JSON (${jsonErrorPosition(text)})`, { field: file });
  }
}

/**
 * Imports a parsed key file: each `pemFile` entry is read (relative to `file`) into a
 * `pem` one, in a copy, so the caller's entries stay as written. @internal
 */
export async function importKeyFile(parsed: unknown, file: string, logger: Logger): Promise<KeySet> {
  const list = typeof parsed === 'object' && parsed !== null ? (parsed as { keys?: unknown }).keys : undefined;
  if (!Array.isArray(list)) return importKeys(parsed);
  refuseUnknownOptions(parsed, ['keys'], { code: 'ERR_INVALID_KEY', noun: 'a key file member', owner: file });
  const base = dirname(file);
  const entries: unknown[] = [];
  for (const [index, entry] of list.entries()) {
    // A key file's entry may also name a PEM file instead of holding the PEM.
    refuseUnknownOptions(entry, [...keyMembers(), 'pemFile'], {
      path: `keys[${index}]`,
      code: 'ERR_INVALID_KEY',
      noun: 'a key file member',
      owner: file,
    });
    const pemFile = typeof entry === 'object' && entry !== null ? (entry as { pemFile?: unknown }).pemFile : undefined;
    if (pemFile === undefined) {
      entries.push(withPinSourceFrom(entry, base));
      continue;
    }
    if (typeof pemFile !== 'string') {
      throw new JwtGrpcError('ERR_INVALID_KEY', `keys[${index}].pemFile must be a path`, { field: `keys[${index}]` });
    }
    const { pemFile: _path, ...rest } = entry as Record<string, unknown>;
    entries.push({
      ...rest,
      pem: await readKeyFile(resolve(base, pemFile), logger, (pem) => pem.includes('PRIVATE KEY'), `${file}: keys[${index}].pemFile`),
    });
  }
  return importKeys({ keys: entries });
}

/** A copy of `entry` whose `pkcs11` URI reads a relative pin-source from `base`, as a `pemFile` is read; any other entry as it is. */
function withPinSourceFrom(entry: unknown, base: string): unknown {
  const ref = typeof entry === 'object' && entry !== null ? (entry as { pkcs11?: unknown }).pkcs11 : undefined;
  return typeof ref === 'string' ? { ...(entry as Record<string, unknown>), pkcs11: pinSourceFrom(ref, base) } : entry;
}

/**
 * Loads a key file: a JSON JWK Set whose entries are JWKs or `{ kid, alg, pemFile }`
 * (a PEM file path, relative to the key file). See {@link importKeys} for the rules.
 *
 * @example
 * ```ts
 * const keys = await loadKeys('/etc/jwt-grpc/keys.json');
 * const server = createJwtServer({ keys });
 * ```
 */
export async function loadKeys(file: string, options: LoadKeysOptions = {}): Promise<KeySet> {
  refuseUnknownOptions(options, LOAD_OPTION_NAMES, { owner: 'loadKeys' });
  // Validated before the file is read: a bad value names the option, not a key.
  const timeoutMs = keyBackendTimeoutOption(options.keyBackendTimeoutMs);
  const logger = options.logger ?? createStderrLogger();
  // A JWK Set may hold only public keys, but it is the file where secrets live: always warn.
  const text = await readKeyFile(file, logger, () => true);
  const keys = await importKeyFile(parseKeyFileText(text, file), file, logger);
  await openHandles(keys, timeoutMs);
  return keys;
}

/**
 * Opens every signing key held by an HSM or a KMS, once, at load, each backend call within
 * `timeoutMs`: a wrong PIN, a missing key, a public key that differs from the file's or a
 * backend that does not answer stops the start (or the reload) with one line naming the
 * kid, rather than failing every GenerateJwt later (or hanging the start). The sessions stay
 * open for signing; a cluster worker opens its own on its first signature.
 */
async function openHandles(keys: KeySet, timeoutMs: number): Promise<void> {
  const handles = keys.handles();
  const results = await Promise.allSettled(handles.map((handle) => handle.open(timeoutMs)));
  const failed = results.findIndex((result) => result.status === 'rejected');
  if (failed < 0) return;
  await Promise.all(handles.map((handle) => handle.close()));
  const reason = (results[failed] as PromiseRejectedResult).reason as Error;
  const kid = (handles[failed] as (typeof handles)[number]).kid;
  const line = reason.message.split('\n')[0] ?? '';
  // Named once: the handle's own errors already start with the kid.
  throw new JwtGrpcError('ERR_INVALID_KEY', line.startsWith(`key ${kid}`) ? line : `key ${kid}: ${line}`, { field: kid, cause: reason });
}
