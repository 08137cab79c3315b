/**
 * Load without errors (short form; `npm run soak` runs the same cells for 10 minutes):
 * GenerateJwt HS256 at 1,000 calls in flight over one connection, and over 500
 * connections, 20 s each against `jwt-grpc serve` pinned to CPU 0 (ghz on CPU 1):
 * zero non-OK responses, and the server's RSS after the run within 20 % of its RSS after
 * the warm-up. See bench/soak/load-cell.ts for how RSS is read.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CorePlan, planCores } from '../../bench/ghz/cores.js';
import { locateGhz } from '../../bench/ghz/ghz-binary.js';
import { type KeysFile, writeKeysFile } from '../../bench/ghz/keys-file.js';
import { killAllCliServers } from '../../bench/soak/cli-server.js';
import { LOAD_CELLS, formatLoadCell, runLoadCell } from '../../bench/soak/load-cell.js';

const DURATION_S = 20;
const WARMUP_ROUND_S = 4;

describe.skipIf(process.platform !== 'linux')('load on loopback: zero non-OK, RSS steady', () => {
  let ghz: string;
  let plan: CorePlan;
  let keys: KeysFile;
  let workDir: string;

  beforeAll(() => {
    ghz = locateGhz((line) => console.log(line));
    plan = planCores(1);
    keys = writeKeysFile(['HS256']);
    workDir = mkdtempSync(join(tmpdir(), 'jwt-grpc-reliability-load-'));
  }, 600_000);

  afterEach(() => killAllCliServers());

  afterAll(() => {
    killAllCliServers();
    keys?.remove();
    if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
  });

  for (const cell of LOAD_CELLS) {
    it(
      `${cell.name}: ${cell.connections} connection(s) x ${cell.concurrency} in flight for ${DURATION_S} s`,
      async () => {
        const result = await runLoadCell({
          cell,
          ghz,
          plan,
          keysFile: keys.path,
          warmupRoundS: WARMUP_ROUND_S,
          warmupRounds: { min: 2, max: 4 },
          durationS: DURATION_S,
          workDir,
          log: (line) => console.log(line),
        });
        console.log(`${formatLoadCell(result)}${plan.pinned ? '' : `\n  (not pinned: ${plan.notes.join('; ')})`}`);
        expect(result.measured.okCount).toBeGreaterThan(0);
        expect(result.measured.count - result.measured.okCount, JSON.stringify(result.measured.errors)).toBe(0);
        expect(result.failures).toEqual([]);
      },
      150_000,
    );
  }
});
