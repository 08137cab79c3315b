import { BENCH_ALGORITHMS } from './algorithms.js';
import { PROFILES } from './profiles.js';

/** The `--help` text; lists every option parse.ts accepts. */
export function helpText(serverNames: readonly string[]): string {
  const { quick, full, smoke } = PROFILES;
  return `Usage: npm run bench -- [options]      (or: node dist/bench/run.js [options])

Runs the micro benchmarks (tinybench) then the macro benchmarks (ghz against each server),
writes bench/results/<timestamp>/{results.json,summary.md} and prints the summary.

Profiles (default: quick):
  --quick               ${quick.durationS} s per ghz cell, ${quick.warmupS} s warm-up, ${quick.repetitions} repetition; about 5 minutes on 2 cores
  --full                ${full.durationS} s per cell, ${full.warmupS} s warm-up, ${full.repetitions} repetitions (median, min-max), HTML reports
  --smoke               everything once with tiny counts (${smoke.durationS} s per cell), under a minute: for CI

Selection:
  --micro-only          only the micro benchmarks
  --ghz-only            only the ghz (macro) benchmarks
  --servers a,b         servers to run (default: all): ${serverNames.join(', ')}
  --algorithms A,B      algorithms (${BENCH_ALGORITHMS.join(', ')}); default: all four for micro,
                        HS256,ES256 for ghz
  --cells f1,f2         run only ghz cells whose id contains one of these, e.g. single,verify
                        (ids: single-hs256-1x50, multi3-es256-15x750, single-verify-hs256-1x50)

Overrides:
  --duration S          seconds per measured ghz run
  --warmup S            seconds of the unrecorded ghz warm-up run (0: none)
  --repetitions N       measured runs per cell
  --server-cores N      server cores of the "N cores" cells (default 3, at most cores - 1
                        so that ghz keeps a core of its own)
  --html | --no-html    render ghz's HTML report per cell (default: only with --full)
  --out DIR             results root (default bench/results)
  -h, --help            this text
`;
}
