/**
 * Watching a key file (src/keys/watch.ts): one call per change of its content, however it
 * was made (written in place, renamed over), none for an event that changed nothing, and
 * nothing after the watch is stopped.
 */
import { mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { WATCH_DEBOUNCE_MS, watchKeyFile } from '../../src/keys/watch.js';
import { silentLogger } from '../../src/lib/index.js';

const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-watch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const settled = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, WATCH_DEBOUNCE_MS * 2));

describe('watchKeyFile', () => {
  it('calls once per change of content: in place, renamed over; not for a touch or another file', async () => {
    const file = join(dir, 'keys.json');
    writeFileSync(file, '{"keys": [1]}');
    let changes = 0;
    const stop = await watchKeyFile(file, () => (changes += 1), silentLogger);
    try {
      const now = new Date();
      utimesSync(file, now, now);
      writeFileSync(join(dir, 'other.json'), 'x');
      writeFileSync(file, '{"keys": [1]}');
      await settled();
      expect(changes, 'same content').toBe(0);

      writeFileSync(file, '{"keys": [2]}');
      await vi.waitFor(() => expect(changes).toBe(1), { timeout: 5000, interval: 50 });

      const temporary = join(dir, '.keys.json.tmp');
      writeFileSync(temporary, '{"keys": [3]}');
      renameSync(temporary, file);
      await vi.waitFor(() => expect(changes).toBe(2), { timeout: 5000, interval: 50 });
      await settled();
      expect(changes, 'one call per change').toBe(2);
    } finally {
      stop();
    }
    writeFileSync(file, '{"keys": [4]}');
    await settled();
    expect(changes, 'stopped').toBe(2);
  });

  it('counts a file that disappears, then comes back, as changes', async () => {
    const file = join(dir, 'gone.json');
    writeFileSync(file, 'a');
    let changes = 0;
    const stop = await watchKeyFile(file, () => (changes += 1), silentLogger);
    try {
      rmSync(file);
      await vi.waitFor(() => expect(changes).toBe(1), { timeout: 5000, interval: 50 });
      writeFileSync(file, 'a');
      await vi.waitFor(() => expect(changes).toBe(2), { timeout: 5000, interval: 50 });
    } finally {
      stop();
    }
  });
});
