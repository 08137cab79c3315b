/**
 * The speed probe's process (see probe.ts), pinned by its parent to one server CPU.
 * Each SIGUSR1 runs the probe once and prints `probe <sequence> <ms>` on stdout: the
 * median of PROBE_REPEATS timings of hashing the same PROBE_BYTES with SHA-256 (native
 * OpenSSL code: no JIT, no GC, no I/O, so its time follows only how fast the CPU runs
 * this process). Between signals it sleeps in the event loop and costs nothing.
 */
import { hash } from 'node:crypto';
import { PROBE_BLOCK_BYTES, PROBE_BLOCKS, PROBE_REPEATS } from './probe-work.js';

const block = Buffer.alloc(PROBE_BLOCK_BYTES, 0x5a);

function hashOnce(): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < PROBE_BLOCKS; i++) hash('sha256', block);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function probe(): number {
  const times = Array.from({ length: PROBE_REPEATS }, hashOnce).sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] as number;
}

let sequence = 0;
probe(); // the first call pays for loading OpenSSL's SHA-256 code
process.on('SIGUSR1', () => {
  sequence += 1;
  process.stdout.write(`probe ${sequence} ${probe().toFixed(4)}\n`);
});
process.on('SIGTERM', () => process.exit(0));
setInterval(() => undefined, 1 << 30); // stay alive between signals
process.stdout.write('probe ready\n');
