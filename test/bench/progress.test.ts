import { mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatClock } from '../../bench/common/format.js';
import { Progress } from '../../bench/common/progress.js';
import { createRunDir, runTimestamp, updateLatestLink } from '../../bench/common/results-dir.js';

describe('formatClock', () => {
  it('writes mm:ss, and h:mm:ss past an hour', () => {
    expect(formatClock(0)).toBe('00:00');
    expect(formatClock(65.4)).toBe('01:05');
    expect(formatClock(3725)).toBe('1:02:05');
    expect(formatClock(-3)).toBe('00:00');
  });
});

describe('Progress', () => {
  it('prints [i/n] server scenario rep r/R elapsed ~left', () => {
    const lines: string[] = [];
    const progress = new Progress(4, 3, (l) => lines.push(l));
    progress.start({ server: 'go', scenario: 'single-hs256-1x50', round: 1, rounds: 2 });
    expect(lines[0]).toMatch(/^\[1\/4\] go single-hs256-1x50 round 1\/2 {2}elapsed 00:00 {2}~00:12 left$/);
    progress.finish();
    progress.start({ server: 'go', scenario: 'single-hs256-1x50', round: 2, rounds: 2 });
    expect(lines[1]).toMatch(/^\[2\/4\]/);
  });

  it('scales the estimate by how much slower than planned the steps went, never faster', () => {
    const progress = new Progress(10, 3, () => undefined);
    for (let i = 0; i < 5; i++) progress.finish();
    expect(progress.secondsLeft(30)).toBeCloseTo(30); // planned 15, actual 2x: 30 left
    expect(progress.secondsLeft(5)).toBeCloseTo(15); // faster than planned: keep the plan
    progress.skip(5);
    expect(progress.secondsLeft(30)).toBe(0);
  });
});

describe('results directory', () => {
  const root = mkdtempSync(join(tmpdir(), 'bench-results-test-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('names runs by UTC start time without colons or milliseconds', () => {
    expect(runTimestamp(new Date('2026-11-22T02:10:00.123Z'))).toBe('2026-11-22T02-10-00Z');
  });

  it('creates distinct directories for runs started in the same second, and links latest to the newest', () => {
    const date = new Date('2026-11-22T02:10:00Z');
    const first = createRunDir(root, date);
    const second = createRunDir(root, date);
    expect(basename(first)).toBe('2026-11-22T02-10-00Z');
    expect(basename(second)).toBe('2026-11-22T02-10-00Z-1');
    updateLatestLink(root, basename(first));
    updateLatestLink(root, basename(second));
    expect(readlinkSync(join(root, 'latest'))).toBe(basename(second));
  });
});
