/** The algorithms the harness knows how to key and benchmark (a subset of jwt-grpc's). */
export const BENCH_ALGORITHMS = ['HS256', 'ES256', 'RS256', 'EdDSA'] as const;
export type BenchAlgorithm = (typeof BENCH_ALGORITHMS)[number];

/** Micro benchmarks cover every algorithm above by default. */
export const DEFAULT_MICRO_ALGORITHMS: readonly BenchAlgorithm[] = BENCH_ALGORITHMS;
/** The macro matrix uses HS256 and ES256 by default: the two of the published Node.js-vs-Go comparison it follows. */
export const DEFAULT_MACRO_ALGORITHMS: readonly BenchAlgorithm[] = ['HS256', 'ES256'];

export function isBenchAlgorithm(value: string): value is BenchAlgorithm {
  return (BENCH_ALGORITHMS as readonly string[]).includes(value);
}
