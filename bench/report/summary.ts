import { keyBackendsSection } from '../keys/backends.js';
import { jwksSection } from '../macro/jwks-throughput.js';
import { loadSummary } from '../load/summary.js';
import { revokeSection } from '../macro/revoke-throughput.js';
import { macroSummary } from '../macro/tables.js';
import { microTable } from '../micro/table.js';
import type { BenchResults } from './results-file.js';
import { verdictSection } from './short-verdict.js';

function header(results: BenchResults): string {
  const { machine, versions, options } = results;
  const macro = results.macro;
  const packages = Object.entries(versions.packages)
    .map(([name, v]) => `${name} ${v ?? '?'}`)
    .join(', ');
  const lines = [
    '## The run',
    '',
    `- Profile: **${options.profile}**` +
      (macro === null
        ? ''
        : `: ${macro.settings.rounds} round(s) of ${macro.settings.durationS} s per cell, interleaved across each scenario's servers; ` +
          `${macro.settings.warmupS} s warm-up per server start`),
    `- Machine: ${options.label === null ? '' : `**${options.label}**: `}${machine.cpuModel}, ${machine.availableCpus} CPUs available ` +
      `(${machine.logicalCpus} logical${machine.virtualized ? ', virtual machine' : ''}), ${machine.memoryGiB} GiB, ${machine.os}, ${machine.kernel}`,
    `- Software: Node ${versions.node}, ${versions.go ?? 'Go: not found'}, ghz ${versions.ghz ?? 'not used'}, ${packages}`,
  ];
  for (const note of [...results.notes, ...(macro?.notes ?? [])]) lines.push(`- Note: ${note}`);
  return lines.join('\n');
}

/** summary.md: the verdict in five lines, the run's header, macro tables and ratios, then the micro table. */
export function renderSummary(results: BenchResults): string {
  const parts = [`# jwt-grpc benchmark, ${results.startedAt}`, verdictSection(results), header(results)];
  if (results.macro !== null) parts.push('## Macro: gRPC servers under ghz', macroSummary(results.macro));
  if (results.macro?.jwks !== undefined)
    parts.push('## The JWK Set over HTTP (discovery port) at saturation', jwksSection(results.macro.jwks));
  if (results.macro?.revoke !== undefined) parts.push('## RevokeJwt throughput per store', revokeSection(results.macro.revoke));
  if (results.macro?.keyBackends !== undefined)
    parts.push('## Keys held by an HSM or a KMS', keyBackendsSection(results.macro.keyBackends));
  // Files written before the load sections existed have none of their fields.
  if (results.loadSettings != null) parts.push(...loadSummary(results));
  if (results.micro !== null) {
    parts.push(
      '## Micro: JWT libraries in-process (tinybench)',
      'Same keys and claims for every library; each operation awaited one at a time. `vs fastest`: mean time / ' +
        "the fastest library's, per (algorithm, operation). `heap B/op`: V8 heap bytes allocated per operation (method: bench/micro/allocation.ts). " +
        '⊘: other processes used > 5 % of the CPUs while the row was timed (timings are wall time: disturbed).',
      microTable(results.micro),
      ...results.micro.notes.map((n) => `- ${n}`),
    );
  }
  return parts.join('\n\n') + '\n';
}
