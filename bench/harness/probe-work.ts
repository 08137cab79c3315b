/** The probe's fixed work, shared by the probe process and the report that describes it. */

/** Bytes hashed per SHA-256 call. */
export const PROBE_BLOCK_BYTES = 64 * 1024;
/** SHA-256 calls per timing: 3 MiB, ~2 ms on a 2.3 GHz Xeon with SHA extensions. */
export const PROBE_BLOCKS = 48;
/** Timings per probe, of which the median is reported: one preemption cannot move it. */
export const PROBE_REPEATS = 5;
