/**
 * Who may have put a PKCS#11 module where a key file points: loading one runs its code (its
 * constructors first) inside the issuer, with the issuer's keys and PIN in reach. So a
 * module is loaded only from a directory the operator allows, and only when no one but root
 * and this process's user could have written it or any directory above it, as sshd
 * (`StrictModes`) and sudo check what they trust. Checked before every load.
 */
import { type Stats, lstatSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, normalize, sep } from 'node:path';
import { invalidOption } from '../../base/errors.js';

/**
 * Where a key file's PKCS#11 `module-path` may point: the directories the system's packages
 * install PKCS#11 modules into. A module is native code that runs inside the issuer as soon
 * as it is loaded, so a key file may name only one that an administrator installed.
 * p11-kit's module directory, `$(libdir)/pkcs11` (its `--with-module-path`; Debian's
 * multiarch and Fedora's lib64 builds of it); SoftHSM2's own directory as Debian, Fedora
 * and Alpine package it, and `/usr/local/lib/softhsm` where it is built from source (its
 * default prefix); Homebrew's on Apple silicon. An HSM vendor's client library (installed
 * under /opt) is allowed with `--pkcs11-module-dirs`.
 */
export const PKCS11_MODULE_DIRS: readonly string[] = [
  '/usr/lib/pkcs11',
  '/usr/lib64/pkcs11',
  '/usr/lib/x86_64-linux-gnu/pkcs11',
  '/usr/lib/aarch64-linux-gnu/pkcs11',
  '/usr/lib/softhsm',
  '/usr/lib64/softhsm',
  '/usr/lib/x86_64-linux-gnu/softhsm',
  '/usr/lib/aarch64-linux-gnu/softhsm',
  '/usr/local/lib/softhsm',
  '/opt/homebrew/lib/softhsm',
];

/**
 * A list of absolute directories, each written in its shortest form (no `.`, `..`, `//` or
 * trailing `/`, so that "inside this directory" is a plain prefix test); else ERR_INVALID_OPTION
 * naming `label`. The `pkcs11ModuleDirs` option's check, and {@link setPkcs11ModuleDirs}'s. @internal
 */
export function checkDirectories(value: unknown, label: string): readonly string[] {
  if (!Array.isArray(value) || value.length === 0) throw invalidOption(label, 'must be a non-empty array of absolute directories');
  value.forEach((entry: unknown, index) => {
    if (typeof entry !== 'string' || !isAbsolute(entry) || normalize(entry) !== entry || (entry.endsWith(sep) && entry !== sep))
      throw invalidOption(
        label,
        `entry ${index} must be an absolute directory without ., .. or a trailing ${sep}, got ${JSON.stringify(entry)}`,
      );
  });
  return value as readonly string[];
}

/** The directories set by {@link setPkcs11ModuleDirs}; unset, the option's default. */
let allowedDirs: readonly string[] | undefined;

/**
 * Sets the directories a key file's PKCS#11 `module-path` may name, for this process: a
 * module, once loaded, stays loaded in the process, whichever key set named it. The CLI sets
 * them from `--pkcs11-module-dirs` (`JWT_GRPC_PKCS11_MODULE_DIRS`); unset, they are the
 * system's PKCS#11 module directories (docs/keys.md). Each must be an absolute path;
 * a bad one throws `ERR_INVALID_OPTION` naming `pkcs11ModuleDirs`.
 *
 * @example
 * ```ts
 * setPkcs11ModuleDirs(['/usr/lib/softhsm', '/opt/cloudhsm/lib']);
 * const keys = await loadKeys('/etc/jwt-grpc/keys.json');
 * ```
 */
export function setPkcs11ModuleDirs(dirs: readonly string[]): void {
  allowedDirs = [...checkDirectories(dirs, 'pkcs11ModuleDirs')];
}

/** The directories a module may be loaded from, now. @internal */
export function pkcs11ModuleDirs(): readonly string[] {
  return allowedDirs ?? PKCS11_MODULE_DIRS;
}

/** Why `info` (of `path`) could have been written by someone other than root or `uid`, or undefined. */
function writerProblem(path: string, info: Pick<Stats, 'mode' | 'uid'>, uid: number, link: boolean): string | undefined {
  if (info.uid !== 0 && info.uid !== uid) return `${path} is owned by uid ${info.uid}, neither root nor this process's user (uid ${uid})`;
  // A symbolic link's own mode means nothing: its directory is checked, and so is its target.
  if (!link && (info.mode & 0o022) !== 0) return `${path} is writable by group or others (mode ${(info.mode & 0o7777).toString(8)})`;
  return undefined;
}

/** `path` and every directory above it, nearest first. */
function chain(path: string): string[] {
  const paths = [path];
  for (let at = dirname(path); at !== paths[paths.length - 1]; at = dirname(at)) paths.push(at);
  return paths;
}

/**
 * Who could have written the module: each entry of the path it resolves to (the file loaded,
 * then its directories), then each of the path as written (links, the directories holding
 * them) must be owned by root or `uid` and, but for a link, not writable by group or others;
 * the module itself must be a regular file.
 */
function custodyProblem(modulePath: string, uid: number): string | undefined {
  const real = realpathSync(modulePath);
  if (!statSync(real).isFile()) return `${real} is not a regular file`;
  for (const path of chain(real)) {
    const problem = writerProblem(path, statSync(path), uid, false);
    if (problem !== undefined) return problem;
  }
  for (const path of chain(modulePath)) {
    const info = lstatSync(path);
    const problem = writerProblem(path, info, uid, info.isSymbolicLink());
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * Why `modulePath` must not be loaded, or undefined: not absolute, not inside an allowed
 * directory ({@link setPkcs11ModuleDirs}), or writable (it, or a directory above it, or what a
 * link in it points to) by anyone but root and this process's user. No owner or mode check
 * where the platform has no uids (Windows). @internal
 *
 * @example
 * ```ts
 * pkcs11ModuleProblem('softhsm/libsofthsm2.so'); // 'module-path must be an absolute path without . or .. (got "softhsm/libsofthsm2.so")'
 * ```
 */
export function pkcs11ModuleProblem(modulePath: string): string | undefined {
  if (!isAbsolute(modulePath) || normalize(modulePath) !== modulePath) {
    return `module-path must be an absolute path without . or .. (got ${JSON.stringify(modulePath.slice(0, 200))})`;
  }
  const dirs = pkcs11ModuleDirs();
  if (!dirs.some((dir) => modulePath.startsWith(dir === sep ? dir : `${dir}${sep}`))) {
    return `the module ${modulePath} is outside the allowed module directories (${dirs.join(', ')}; --pkcs11-module-dirs)`;
  }
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  let problem: string | undefined;
  try {
    problem = custodyProblem(modulePath, uid);
  } catch (err) {
    return `cannot check the module ${modulePath}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`;
  }
  return problem === undefined ? undefined : `refused the module ${modulePath}: ${problem}, so someone else could have replaced it`;
}
