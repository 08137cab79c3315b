import { basename, dirname, resolve } from 'node:path';
import { JwtGrpcError } from '../errors.js';
import { type Logger, createStderrLogger } from '../log.js';
import { readSecretFile } from '../secret-file.js';
import { importKeys, keyMembers } from './import.js';
import { jsonErrorPosition } from './json-position.js';
import type { KeySet } from './key-set.js';
import { optionNames, refuseUnknownOptions } from '../known-options.js';

/** The one name loadKeys' options hold. */
const LOAD_OPTION_NAMES = optionNames<NonNullable<Parameters<typeof loadKeys>[1]>>({ logger: true });

/** Reads a key or PEM file; warns, as ssh does, when one holding secrets is open to group, others or another user. */
async function readKeyFile(path: string, logger: Logger, holdsSecrets: (text: string) => boolean, field = path): Promise<string> {
  try {
    return (await readSecretFile(path, 'key file', logger, (content) => holdsSecrets(content.toString('utf8')))).toString('utf8');
  } catch (err) {
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
      entries.push(entry);
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
export async function loadKeys(file: string, options: { logger?: Logger } = {}): Promise<KeySet> {
  refuseUnknownOptions(options, LOAD_OPTION_NAMES, { owner: 'loadKeys' });
  const logger = options.logger ?? createStderrLogger();
  // A JWK Set may hold only public keys, but it is the file where secrets live: always warn.
  const text = await readKeyFile(file, logger, () => true);
  const keys = await importKeyFile(parseKeyFileText(text, file), file, logger);
  await openHandles(keys);
  return keys;
}

/**
 * Opens every signing key held by an HSM or a KMS, once, at load: a wrong PIN, a missing
 * key or a public key that differs from the file's stops the start (or the reload) with
 * one line naming the kid, rather than failing every GenerateJwt later. The sessions stay
 * open for signing; a cluster worker opens its own on its first signature.
 */
async function openHandles(keys: KeySet): Promise<void> {
  const handles = keys.handles();
  const results = await Promise.allSettled(handles.map((handle) => handle.open()));
  const failed = results.findIndex((result) => result.status === 'rejected');
  if (failed < 0) return;
  await Promise.all(handles.map((handle) => handle.close()));
  const reason = (results[failed] as PromiseRejectedResult).reason as Error;
  const kid = (handles[failed] as (typeof handles)[number]).kid;
  throw new JwtGrpcError('ERR_INVALID_KEY', `key ${kid}: ${reason.message.split('\n')[0]}`, { field: kid, cause: reason });
}
