/**
 * A key file as `jwt-grpc keys` edits it: its entries as written (members it does not
 * know, `pemFile` references and order kept), and a replacement that a reader never sees
 * half-written.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { JwtGrpcError } from '../base/errors.js';
import type { Logger } from '../base/log.js';
import { readSecretFile } from '../base/secret-file.js';
import { namesPkcs11Module, parseKeyFileText } from './load.js';

/** One entry of a key file, as written. @internal */
export type KeyFileEntry = Record<string, unknown> & { readonly kid: string; readonly alg: string };

/**
 * Reads a key file's entries as written (warning on `logger` when it is open to others, and
 * refusing it then when it names a PKCS#11 module, as loadKeys does); loadKeys checks them. @internal
 */
export async function readKeyFileEntries(file: string, logger: Pick<Logger, 'warn'>): Promise<KeyFileEntry[]> {
  let text: string;
  try {
    text = (await readSecretFile(file, 'key file', logger, () => true, namesPkcs11Module)).toString('utf8');
  } catch (err) {
    if (err instanceof JwtGrpcError) throw err;
    throw new JwtGrpcError('ERR_FILE', `cannot read key file ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`, { field: file });
  }
  const parsed = parseKeyFileText(text, file);
  const list = typeof parsed === 'object' && parsed !== null ? (parsed as { keys?: unknown }).keys : undefined;
  if (!Array.isArray(list) || list.some((entry) => typeof entry !== 'object' || entry === null || Array.isArray(entry))) {
    throw new JwtGrpcError('ERR_FILE', `key file ${file} must hold a JWK Set: an object with a "keys" array of objects`, { field: file });
  }
  return list as KeyFileEntry[];
}

/** The text of a key file: one entry per block, for readable diffs. */
function keyFileText(entries: readonly KeyFileEntry[]): string {
  return `${JSON.stringify({ keys: entries }, null, 2)}\n`;
}

/** Flushes a directory's entries (the rename) to disk; a file system that cannot is left as it is. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY).catch(() => undefined);
  if (handle === undefined) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}

/**
 * Writes a key file, mode 0600: to a temporary file beside it, flushed to disk, then
 * renamed over it, so a server reloading at any moment reads the old file or the new
 * one, never a part. `exclusive` refuses to replace an existing file. @internal
 */
export async function writeKeyFile(file: string, entries: readonly KeyFileEntry[], options: { exclusive: boolean }): Promise<void> {
  const dir = dirname(file);
  if (options.exclusive) {
    // Claims the name first: another writer, or an existing file, makes this fail.
    const claim = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600).catch((err: NodeJS.ErrnoException) => {
      const why = err.code === 'EEXIST' ? 'it exists (--force replaces it)' : (err.code ?? String(err));
      throw new JwtGrpcError('ERR_FILE', `cannot create key file ${file}: ${why}`, { field: file });
    });
    await claim.close();
  }
  const temporary = join(dir, `.${basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      await handle.writeFile(keyFileText(entries), 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (err) {
    await rm(temporary, { force: true });
    if (options.exclusive) await rm(file, { force: true });
    if (err instanceof JwtGrpcError) throw err;
    throw new JwtGrpcError('ERR_FILE', `cannot write key file ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`, { field: file });
  }
  await syncDirectory(dir);
}
