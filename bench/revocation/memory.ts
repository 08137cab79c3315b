/**
 * What a revoked token costs a server in memory and on disk (issue 24): the in-memory set
 * every server holds (`Revocations`, src/revocation/revocations.ts, as a server feeds it from
 * its store) filled with 1,000,000 entries of realistic token ids (22 characters, 128 random
 * bits) and expiries, V8's heap measured after a full GC before and after (`--expose-gc`); then
 * the same entries as the revocations file (docs/revocation.md, "The file"): its size per
 * entry, and the time the file store takes to load it at start. Redis's share is
 * bench/revocation/redis-memory.ts's. Run: `npm run bench:revocation-memory` (`-- --count N`).
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createFileRevocationStore } from '../../src/revocation/file-store.js';
import { Revocations } from '../../src/revocation/revocations.js';
import type { Revocation } from '../../src/contracts/revocation-store.js';
import type { Logger } from '../../src/base/log.js';
import { benchRevocation, revocationLine } from './entries.js';

const { values } = parseArgs({ options: { count: { type: 'string', default: '1000000' } } });
const count = Number(values.count);
if (!Number.isSafeInteger(count) || count < 1) throw new Error('--count: a positive integer');
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc (npm run bench:revocation-memory does)');

/** Entries handed to the set at once, as a store's load hands them. */
const BATCH = 10_000;
const quiet: Logger = { info: () => undefined, warn: (m) => console.warn(m), error: (m) => console.error(m) };

/** Heap in use after full collections: twice, so that what the first one finalizes goes too. */
function heapUsed(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

const nowS = Date.now() / 1000;
const before = heapUsed();
const revocations = new Revocations();
for (let done = 0; done < count; done += BATCH) {
  const batch: Revocation[] = [];
  for (let i = done; i < Math.min(count, done + BATCH); i++) batch.push(benchRevocation(i, nowS));
  revocations.receive(batch);
}
const after = heapUsed();
if (revocations.size !== count) throw new Error(`the set holds ${revocations.size} entries, not ${count}`);
console.log(
  `Node ${process.version}; ${count.toLocaleString('en-US')} revocations (jti: 22 characters, base64url of 128 random bits; expiry 1-2 hours ahead)`,
);
console.log(`heap (after gc): ${mib(before)} before, ${mib(after)} after: ${((after - before) / count).toFixed(1)} bytes per revocation`);

// The same number of entries as the file, then loaded by the file store as a server starts on it.
const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-revocation-memory-'));
try {
  const file = join(dir, 'revocations.jsonl');
  const chunks: string[] = [];
  for (const revocation of revocations.values()) chunks.push(revocationLine(revocation));
  writeFileSync(file, chunks.join(''));
  const bytes = statSync(file).size;
  console.log(`file: ${mib(bytes)}: ${(bytes / count).toFixed(1)} bytes per revocation (one line each, no reason)`);
  await revocations.close();
  const store = createFileRevocationStore(file, { logger: quiet });
  let loaded = 0;
  const startedAt = performance.now();
  await store.start((batch) => (loaded += batch.length));
  const ms = performance.now() - startedAt;
  await store.close();
  if (loaded !== count) throw new Error(`the file store loaded ${loaded} entries, not ${count}`);
  console.log(`file store start: ${loaded.toLocaleString('en-US')} entries read in ${Math.round(ms)} ms`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
