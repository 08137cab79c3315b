/**
 * Notices that a key file changed, however it was changed: rewritten in place, renamed
 * over (`jwt-grpc keys rotate`, editors), or swapped by the kubelet in a mounted
 * Kubernetes Secret, which writes a new timestamped directory and renames a `..data`
 * symlink over the old one, so the file itself is never written. Watching the file would
 * miss that; this watches its directory and compares the file's content hash, so every
 * way is seen and an event that changed nothing (a `touch`, another file) reloads
 * nothing. A poll of the hash backs the watch up where a file system sends no events.
 */
import { createHash } from 'node:crypto';
import { type FSWatcher, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Logger } from '../base/log.js';

/** Events arrive in bursts (a rename is several): act once they have settled. */
export const WATCH_DEBOUNCE_MS = 300;
/** The poll behind the watch. */
export const WATCH_POLL_MS = 10_000;

/** The file's SHA-256, or what kept it from being read (a missing file is a state too). */
async function fingerprint(file: string): Promise<string> {
  try {
    return createHash('sha256')
      .update(await readFile(file))
      .digest('hex');
  } catch (err) {
    return `unreadable: ${(err as NodeJS.ErrnoException).code ?? String(err)}`;
  }
}

/**
 * Calls `onChange` when `file`'s content differs from what it was at the start or at the
 * last call: once per change, after the events settle. Returns a function that stops
 * watching. @internal
 */
export async function watchKeyFile(file: string, onChange: () => void, logger: Logger): Promise<() => void> {
  const path = resolve(file);
  let last = await fingerprint(path);
  let timer: NodeJS.Timeout | undefined;
  let checking = Promise.resolve();
  const check = (): void => {
    checking = checking.then(async () => {
      const now = await fingerprint(path);
      if (now === last) return;
      last = now;
      onChange();
    });
  };
  const settle = (): void => {
    clearTimeout(timer);
    timer = setTimeout(check, WATCH_DEBOUNCE_MS);
  };
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(path), { persistent: false }, settle);
    watcher.on('error', (err) =>
      logger.warn(`watching ${dirname(path)} failed; polling ${file} every ${WATCH_POLL_MS / 1000} s`, { error: err.message }),
    );
  } catch (err) {
    logger.warn(`cannot watch ${dirname(path)}; polling ${file} every ${WATCH_POLL_MS / 1000} s`, { error: (err as Error).message });
  }
  const poll = setInterval(check, WATCH_POLL_MS).unref();
  return () => {
    watcher?.close();
    clearInterval(poll);
    clearTimeout(timer);
  };
}
