/**
 * The default connection cap (src/base/connection-guard.ts): derived from the
 * open-files limit where Linux tells it, so that a flood meets a logged refusal while the
 * rest of the process still gets descriptors. The cap itself is tested over sockets in
 * test/server/handshake.integration.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { FALLBACK_MAX_CONNECTIONS, RESERVED_DESCRIPTORS, defaultMaxConnections, openFilesLimit } from '../../src/base/connection-guard.js';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            600                  4096                 files
Max locked memory         8388608              8388608              bytes
`;

describe('the default connection cap', () => {
  it('reads the soft open-files limit from /proc/self/limits', () => {
    expect(openFilesLimit(() => LIMITS)).toBe(600);
    expect(openFilesLimit(() => LIMITS.replace('600 ', 'unlimited '))).toBeUndefined();
    expect(
      openFilesLimit(() => {
        throw new Error('ENOENT');
      }),
    ).toBeUndefined();
  });

  it('leaves descriptors to the rest of the process: the limit less 400, at least half of it', () => {
    expect(defaultMaxConnections(65_536)).toBe(65_536 - RESERVED_DESCRIPTORS);
    expect(defaultMaxConnections(1024)).toBe(624);
    // The case: 600 descriptors, 650 silent sockets. 300 of them are held at most, the rest refused.
    expect(defaultMaxConnections(600)).toBe(300);
    expect(defaultMaxConnections(300)).toBe(150);
    expect(defaultMaxConnections(1)).toBe(1);
  });

  it('falls back to 10,000 where the limit is unknown', () => {
    expect(defaultMaxConnections(undefined)).toBe(FALLBACK_MAX_CONNECTIONS);
    expect(FALLBACK_MAX_CONNECTIONS).toBe(10_000);
  });

  it('is what this process gets on Linux', () => {
    const limit = openFilesLimit();
    if (process.platform === 'linux') expect(limit).toBeGreaterThan(0);
    expect(defaultMaxConnections(limit)).toBe(
      limit === undefined ? FALLBACK_MAX_CONNECTIONS : Math.max(Math.floor(limit / 2), limit - RESERVED_DESCRIPTORS),
    );
  });
});
