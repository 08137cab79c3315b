/**
 * Load without errors (short form; `npm run soak` runs the same cells for 10 minutes):
 * GenerateJwt HS256 at 1,000 calls in flight over one connection, and over 500
 * connections, against `jwt-grpc serve` pinned to CPU 0 (ghz on CPU 1), on each
 * transport, in rounds: zero non-OK responses, and the server's RSS levelling off, not
 * growing round after round. See bench/soak/load-cell.ts for how RSS is read and judged.
 */
import { describe, expect, it } from 'vitest';
import { planCores } from '../../bench/harness/cores.js';
import { GROWTH_LIMIT_MIB, LOAD_SCENARIOS, formatLoadCell, runLoadCell } from '../../bench/soak/load-cell.js';
import { TRANSPORTS } from '../helpers/server.js';
import { reliabilityFixture } from './fixture.js';

/**
 * Rounds of each cell and their length, on both transports: 7 rounds of 5 s (35 s of load
 * per cell; before: 2 to 4 warm-up rounds of 10 s and a measured run of 20 s on http2, 10 s
 * on grpc-js, 40-60 s and 30-50 s). The first 3 rounds are the warm-up; the last
 * {@link JUDGED_ROUNDS} readings, three round-to-round growths, are judged. What still
 * holds with less load: a leak of 100 bytes per call grows RSS by 1.7 MiB a round at the
 * slowest rate measured here (3,500 calls/s, 17,500 calls a round), and at least ~2 MiB a
 * round at the usual 5,000-16,000 calls/s, in every round: a median of the three catches it.
 */
const ROUND_S = 5;
const ROUNDS = 7;
const JUDGED_ROUNDS = 4;

describe.skipIf(process.platform !== 'linux').each(TRANSPORTS)('load on loopback, transport %s: zero non-OK, RSS steady', (transport) => {
  const fixture = reliabilityFixture('load', { algorithms: ['HS256'], ghz: true });

  for (const scenario of LOAD_SCENARIOS) {
    it(
      `${scenario.name}: ${scenario.connections} connection(s) x ${scenario.concurrency} in flight, ${ROUNDS} rounds of ${ROUND_S} s`,
      async () => {
        const plan = planCores(1);
        const result = await runLoadCell({
          scenario,
          transport,
          ghz: fixture.ghz,
          plan,
          keysFile: fixture.keysFile,
          roundS: ROUND_S,
          rounds: ROUNDS,
          judgedRounds: JUDGED_ROUNDS,
          growthLimitMiB: GROWTH_LIMIT_MIB,
          workDir: fixture.dir,
          log: (line) => console.log(line),
        });
        console.log(`${formatLoadCell(result)}${plan.pinned ? '' : `\n  (not pinned: ${plan.notes.join('; ')})`}`);
        expect(result.rounds).toHaveLength(ROUNDS);
        for (const round of result.rounds) expect(round.count - round.okCount, JSON.stringify(round.errors)).toBe(0);
        expect(result.failures).toEqual([]);
      },
      150_000,
    );
  }
});
