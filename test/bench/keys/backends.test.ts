/**
 * The key-backend rows of the harness: each handle's ratio is taken round by round against
 * the in-memory key's same round (a shared machine's load moves between rounds), and the
 * summary section prints every source beside in memory with that ratio and the skips.
 */
import { describe, expect, it } from 'vitest';
import { type KeyBackendRow, MEMORY, keyBackendCells, keyBackendsSection } from '../../../bench/keys/backends.js';

function row(source: string, concurrency: number, callsPerSecond: number): KeyBackendRow {
  return { source, concurrency, callsPerSecond, cpuMicrosPerCall: 1e6 / callsPerSecond, p99Ms: 1, errors: 0 };
}

describe('key backend rows', () => {
  it("takes each round's ratio against in memory's same round, then the median", () => {
    // Round 2 ran while the machine was busy: both sources slowed; the per-round ratio stays 0.5.
    const rows = [
      row(MEMORY, 8, 1000),
      row('hsm', 8, 500),
      row(MEMORY, 8, 200),
      row('hsm', 8, 100),
      row(MEMORY, 8, 1000),
      row('hsm', 8, 500),
    ];
    const [memory, hsm] = keyBackendCells(rows, [MEMORY, 'hsm'], [8]);
    expect(memory).toMatchObject({ source: MEMORY, callsPerSecond: 1000, ratioToMemory: 1 });
    // Medians of the calls/s would give 500 / 1000 here too, but round by round is what holds when rounds differ.
    expect(hsm).toMatchObject({ source: 'hsm', concurrency: 8, callsPerSecond: 500, ratioToMemory: 0.5 });
    expect(hsm?.rounds).toHaveLength(3);
    const skewed = keyBackendCells(
      [row(MEMORY, 1, 1000), row('hsm', 1, 900), row(MEMORY, 1, 100), row('hsm', 1, 80)],
      [MEMORY, 'hsm'],
      [1],
    );
    // Ratios 0.9 and 0.8: the median of two is their mean; pooled medians would say 490 / 550.
    expect(skewed[1]?.ratioToMemory).toBeCloseTo(0.85, 5);
  });

  it('prints every source and level beside in memory, with the ratio and the skipped sources', () => {
    const cells = keyBackendCells([row(MEMORY, 1, 1000), row('SoftHSM2 (PKCS#11)', 1, 750)], [MEMORY, 'SoftHSM2 (PKCS#11)'], [1]);
    const section = keyBackendsSection({ durationS: 5, rounds: 1, serverCpus: [0], cells, skipped: ['local-kms: not installed'] });
    expect(section).toContain('| in memory | 1 | 1000 | 1.00 |');
    expect(section).toContain('| SoftHSM2 (PKCS#11) | 1 | 750 | 0.75 |');
    expect(section).toContain('- Skipped: local-kms: not installed');
  });
});
