import { FEATURES } from '../macro/features.js';
import { BENCH_ALGORITHMS } from './algorithms.js';
import { PROFILES } from './profiles.js';

/** The `--help` text; lists every option parse.ts accepts. */
export function helpText(serverNames: readonly string[]): string {
  const { quick, full, smoke } = PROFILES;
  return `Usage: npm run bench -- [options]      (or: node dist/bench/run.js [options])

Runs the micro benchmarks (tinybench) then the macro benchmarks (ghz against each server),
writes bench/results/<timestamp>/{results.json,summary.md} and prints the summary.
Each scenario's servers are measured in interleaved rounds; every ratio is taken per
round and reported as a median with its 95 % bootstrap interval.

Profiles (default: quick):
  --quick               the 1-core scenarios against the servers of the ratios: ${quick.rounds} rounds of ${quick.durationS} s,
                        ${quick.warmupS} s warm-up per server start, the HS256 h2load cell; about 7 minutes on 2 cores
  --full                every scenario and server: ${full.rounds} rounds of ${full.durationS} s, ${full.warmupS} s warm-up, HTML reports;
                        about 105 minutes on 2 cores (40 of them the load sections)
  --smoke               one scenario of each kind, every server, ${smoke.rounds} rounds of ${smoke.durationS} s: under a minute, for CI

Selection:
  --micro-only          only the micro benchmarks
  --ghz-only            only the ghz (macro) benchmarks
  --load-only           only the load sections below (those given, else the profile's)

Load sections (jwt-grpc and the Go peer on one core, each section starting them afresh):
  --h2load              saturated requests/s under h2load (nghttp2-client), ghz on the same
                        servers for comparison, and which side saturated (quick: HS256 only)
  --open-loop           latency at fixed arrival rates (25/50/75/90 % of each server's
                        capacity, 25/50/80 % of Go's, 1,000 and 5,000/s), open loop: p50/p99/p99.9,
                        and server CPU per call (ours / Go at each share of Go's; full runs it)
  --fixed-load          only the open-loop points at 25/50/80 % of Go's saturated rate, offered to
                        both: server CPU per call, ours / Go, at fixed load (HS256 alone: ~1.5 min;
                        with --algorithms HS256,ES256 about 2.5)
  --warmup-sweep        CPU per call vs Go after 0/2,000/20,000/200,000 warm-up calls on
                        fresh servers, and time from start to the first OK call
  --rest                gRPC against REST (POST /token, HTTP/1.1 keep-alive) for the same work, on
                        Node (grpc-js / node:http, fast-jwt) and Rust (tonic / axum, jsonwebtoken),
                        all under h2load (--h1 for REST), one core (full: HS256 and ES256)
  --startup             start-up, pinned to one core, 11 interleaved runs: exec to the first OK
                        call (key file, ephemeral keys, NODEMAXPROCS=2), a killed worker to its
                        replacement serving, \`jwt-grpc token\`, import('jwt-grpc'), beside a
                        bare Node listener and Go (quick and full run it)
  --no-load             none of them (quick runs --h2load and --startup, full all five)
  --servers a,b         servers to run (default: the profile's): ${serverNames.join(', ')}
  --algorithms A,B      algorithms (${BENCH_ALGORITHMS.join(', ')}); default: all four for micro,
                        HS256,ES256 for ghz
  --cells f1,f2         run only the cells whose scenario id contains one of these, e.g. single,verify
                        (scenario ids: single-hs256-1x50, multi3-es256-15x750, single-verify-hs256-1x50)
  --features f1,f2      the rows and cells of one question each (--servers/--cells, when given, replace
                        the features'):
${Object.entries(FEATURES)
  .map(([name, f]) => `                          ${name}: ${f.description}`)
  .join('\n')}
  --baseline-ref REF    also build commit REF (git archive into a temporary folder, npm run build there)
                        and run it as the row jwt-grpc@<hash> beside jwt-grpc (ratio \`ours / baseline ref\`)

Overrides:
  --duration S          seconds per measured ghz run
  --warmup S            seconds of the unrecorded ghz run after each server start (0: none)
  --rounds N            measured runs per cell (5 or more for an interval)
  --server-cores N,...  N of the "N cores" scenarios, one group per N (default 3, at most
                        cores - 1 so that ghz keeps a core); e.g. 2,4,8 on a 16-core machine
  --html | --no-html    render ghz's HTML report per cell (default: only with --full)
  --label TEXT          a name for the machine, shown in the summary (e.g. "16-core bare metal")
  --out DIR             results root (default bench/results)
  -h, --help            this text
`;
}
