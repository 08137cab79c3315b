/**
 * `npm run bench:import`: what the consumer's side costs a program that only verifies,
 * beside jose, the library such a program would otherwise use, measured in the same run.
 *
 * - Import: wall time of a fresh `node` that only imports `jwt-grpc/client`, `jose`, or
 *   nothing (`node -e 0`), each pinned to the same one core (taskset), the median of
 *   {@link IMPORT_RUNS} runs with its 95 % interval. Runs interleave (run i measures every
 *   row once before run i+1), and the ratio pairs the rows of the same run.
 * - Bundle: bytes of a single-file esbuild bundle (platform node, ESM, minified) of a
 *   verify-only consumer, written with `createRemoteVerifier` + `verify` and with jose's
 *   `createRemoteJWKSet` + `jwtVerify`.
 *
 *   npm run bench:import [-- --runs 11] [--cpu 0]
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { type MedianInterval, bootstrapMedian, seedFor } from '../common/median-interval.js';
import { markdownTable } from '../common/markdown.js';
import { repoPath } from '../kit/paths.js';
import { type ParsedCommandLine, parseFlags, parseInteger, runProgram } from '../kit/program.js';
import { timeRun } from './startup.js';

/** Runs per row, as the start-up section takes. */
export const IMPORT_RUNS = 11;

/** What each row runs: a fresh node, from the package root (so `jwt-grpc/client` resolves through `exports`). */
const ROWS = {
  'node -e 0': ['-e', '0'],
  "import('jose')": ['--input-type=module', '-e', "await import('jose')"],
  "import('jwt-grpc/client')": ['--input-type=module', '-e', "await import('jwt-grpc/client')"],
} as const;
type RowName = keyof typeof ROWS;

/** The same verify-only consumer, written with each library: what the bundle rows bundle. */
const CONSUMERS = {
  'jwt-grpc/client': `import { createRemoteVerifier } from 'jwt-grpc/client';
const verifier = createRemoteVerifier({ jwksUrl: process.argv[2] }, { audience: 'api' });
console.log(await verifier.verify(process.argv[3]));`,
  jose: `import { createRemoteJWKSet, jwtVerify } from 'jose';
const keys = createRemoteJWKSet(new URL(process.argv[2]));
console.log(await jwtVerify(process.argv[3], keys, { audience: 'api' }));`,
} as const;

export interface ImportCost {
  readonly rows: Readonly<Record<RowName, MedianInterval>>;
  /** `import('jwt-grpc/client')` / `import('jose')`, paired per run. */
  readonly clientToJose: MedianInterval;
  /** Minified bundle bytes of each consumer. */
  readonly bundles: Readonly<Record<keyof typeof CONSUMERS, number>>;
}

/** Measures the rows, interleaved, on `cpu`. */
export async function measureImportCost(runs: number, cpu: number): Promise<ImportCost> {
  const values = Object.fromEntries(Object.keys(ROWS).map((name) => [name, [] as number[]])) as Record<RowName, number[]>;
  for (let run = 0; run < runs; run++) {
    for (const [name, args] of Object.entries(ROWS) as [RowName, readonly string[]][]) {
      values[name].push(await timeRun([cpu], process.execPath, args));
    }
  }
  const rows = Object.fromEntries(Object.entries(values).map(([name, ms]) => [name, bootstrapMedian(ms, seedFor(name))])) as Record<
    RowName,
    MedianInterval
  >;
  const client = values["import('jwt-grpc/client')"];
  const ratios = client.map((ms, i) => ms / (values["import('jose')"][i] as number));
  return { rows, clientToJose: bootstrapMedian(ratios, seedFor('client/jose')), bundles: await bundleSizes() };
}

/** Bytes of each consumer bundled to one minified file. */
async function bundleSizes(): Promise<Record<keyof typeof CONSUMERS, number>> {
  // Inside the package, so that `jwt-grpc/client` resolves to this build through `exports`.
  const dir = mkdtempSync(join(repoPath('dist'), 'import-cost-'));
  try {
    const sizes = {} as Record<keyof typeof CONSUMERS, number>;
    for (const [name, code] of Object.entries(CONSUMERS) as [keyof typeof CONSUMERS, string][]) {
      const entry = join(dir, `${name.replace('/', '-')}.mjs`);
      const outfile = `${entry}.bundle.mjs`;
      writeFileSync(entry, code);
      await build({ entryPoints: [entry], outfile, bundle: true, platform: 'node', format: 'esm', minify: true, logLevel: 'error' });
      sizes[name] = statSync(outfile).size;
    }
    return sizes;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const ms = (interval: MedianInterval): string =>
  `${interval.median.toFixed(1)} ms${interval.low === null ? '' : ` [${interval.low.toFixed(1)}, ${(interval.high as number).toFixed(1)}]`}`;

/** The report: one table of wall times, the ratio, and one of bundle sizes. */
export function importCostReport(cost: ImportCost, runs: number, cpu: number): string {
  const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;
  const ratio = cost.clientToJose;
  return [
    `Import, wall time of a fresh node (median of ${runs} interleaved runs, 95 % interval; pinned to CPU ${cpu}):`,
    markdownTable(
      ['', 'wall time'],
      Object.entries(cost.rows).map(([name, interval]) => [name, ms(interval)]),
    ),
    `import('jwt-grpc/client') / import('jose'), paired per run: ${ratio.median.toFixed(2)}x` +
      (ratio.low === null ? '' : ` [${ratio.low.toFixed(2)}, ${(ratio.high as number).toFixed(2)}]`),
    '',
    'Verify-only consumer bundled to one file (esbuild, platform node, ESM, minified):',
    markdownTable(
      ['', 'bytes'],
      Object.entries(cost.bundles).map(([name, bytes]) => [name, kb(bytes)]),
    ),
    `jwt-grpc/client / jose: ${(cost.bundles['jwt-grpc/client'] / cost.bundles.jose).toFixed(2)}x`,
  ].join('\n');
}

interface Options {
  readonly runs: number;
  readonly cpu: number;
}

function parse(argv: readonly string[]): ParsedCommandLine<Options> {
  const values = parseFlags(argv, { runs: { type: 'string' }, cpu: { type: 'string' } });
  if (values === 'help') return { kind: 'help' };
  return {
    kind: 'run',
    options: {
      runs: values.runs === undefined ? IMPORT_RUNS : parseInteger('--runs', values.runs, 1, 1000),
      cpu: values.cpu === undefined ? 0 : parseInteger('--cpu', values.cpu, 0),
    },
  };
}

await runProgram<Options>({
  name: 'bench:import',
  url: import.meta.url,
  help: () =>
    'Usage: npm run bench:import [-- --runs N] [--cpu C]\n\nImport time and bundle size of a verify-only consumer, beside jose.\n',
  parse,
  async run({ runs, cpu }) {
    process.stdout.write(`${importCostReport(await measureImportCost(runs, cpu), runs, cpu)}\n`);
    return 0;
  },
});
