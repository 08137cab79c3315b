/**
 * Reading a file that holds a secret (a key file, a PEM private key, the admin token, a TLS
 * private key) with one check, as ssh does for its keys: a warning when someone else could
 * read or replace it. One helper for every such file, so they all get the same check and the
 * same words. @internal
 */
import type { Buffer } from 'node:buffer';
import nodeCluster from 'node:cluster';
import type { Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import { JwtGrpcError } from './errors.js';
import type { Logger } from './log.js';

/**
 * What is wrong with who may read a secret file, or undefined when nothing is: readable or
 * writable by group or others (mode & 077), or owned by neither this process's user nor root
 * (its owner can read it, or swap it for a secret of its own). No owner check where the
 * platform has no uids (Windows): `uid` is this process's, `process.getuid?.()`.
 *
 * @example
 * ```ts
 * // hidden: import { statSync } from 'node:fs';
 * const problem = secretFileProblem(statSync('/run/secrets/jwt-admin'), process.getuid?.()); // 'is readable by group or others (mode 644): chmod 600 it'
 * ```
 */
export function secretFileProblem(info: Pick<Stats, 'mode' | 'uid'>, uid: number | undefined): string | undefined {
  const problems: string[] = [];
  if ((info.mode & 0o077) !== 0) {
    const how = (info.mode & 0o044) !== 0 ? 'readable' : 'writable';
    problems.push(`is ${how} by group or others (mode ${(info.mode & 0o777).toString(8)}): chmod 600 it`);
  }
  if (uid !== undefined && info.uid !== uid && info.uid !== 0)
    problems.push(`is owned by uid ${info.uid}, not by this process's user (uid ${uid}) or root: chown it`);
  return problems.length === 0 ? undefined : problems.join('; it ');
}

/**
 * {@link secretFileProblem} for a file that is refused, not warned about, when someone else
 * could read or replace it (one naming code to load, a PIN): undefined where the platform has
 * no uids (Windows), whose file modes do not say who may read a file. @internal
 *
 * @example
 * ```ts
 * // hidden: import { statSync } from 'node:fs';
 * const problem = secretFileRefusal(statSync('/etc/jwt-grpc/hsm-pin.txt')); // undefined when mode 600, owned by this user
 * ```
 */
export function secretFileRefusal(info: Pick<Stats, 'mode' | 'uid'>): string | undefined {
  const uid = process.getuid?.();
  return uid === undefined ? undefined : secretFileProblem(info, uid);
}

/** What each logger was warned about already: a file read again (a reload, the primary's check then the server's read) warns once. */
const warned = new WeakMap<Pick<Logger, 'warn'>, Set<string>>();

/**
 * Warns, once per logger, when {@link secretFileProblem} finds one; the path names the file,
 * never its content. A cluster worker does not: its primary checked the same files at start.
 */
function warnIfExposed(info: Pick<Stats, 'mode' | 'uid'>, what: string, path: string, logger: Pick<Logger, 'warn'>): void {
  const problem = secretFileProblem(info, process.getuid?.());
  if (problem === undefined || nodeCluster.isWorker) return;
  const message = `${what} ${path} ${problem}`;
  let seen = warned.get(logger);
  if (seen === undefined) warned.set(logger, (seen = new Set()));
  if (seen.has(message)) return;
  seen.add(message);
  logger.warn(message);
}

/**
 * Reads a secret file and warns (through `logger`) when group, others or another user could
 * read or replace it. The mode and owner are those of the file read (one open, fstat, read),
 * not of a name that could change between a check and the read. `holdsSecrets` says whether
 * the text read is secret at all (a PEM file of a public key is not): no warning otherwise.
 * `runsCode` says whether the text names code this process would load (a key file naming a
 * PKCS#11 module): such a file is refused, `ERR_FILE` naming it, rather than warned about,
 * since whoever could replace it could run code in this process.
 * Read errors propagate as the file system reports them; the caller names the option.
 *
 * @example
 * ```ts
 * // hidden: import { createStderrLogger } from './log.js';
 * const secret = (await readSecretFile('/run/secrets/jwt-admin', 'admin token file', createStderrLogger())).toString('utf8');
 * ```
 */
export async function readSecretFile(
  path: string,
  what: string,
  logger: Pick<Logger, 'warn'>,
  holdsSecrets: (content: Buffer) => boolean = () => true,
  runsCode: (content: Buffer) => boolean = () => false,
): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const [info, content] = [await handle.stat(), await handle.readFile()];
    const problem = runsCode(content) ? secretFileRefusal(info) : undefined;
    if (problem !== undefined) {
      throw new JwtGrpcError(
        'ERR_FILE',
        `${what} ${path} ${problem}; refused, as it names code this process would load (a PKCS#11 module)`,
        {
          field: path,
        },
      );
    }
    if (holdsSecrets(content)) warnIfExposed(info, what, path, logger);
    return content;
  } finally {
    await handle.close();
  }
}
