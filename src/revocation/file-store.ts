/**
 * Revocations in an append-only file on one machine (`revocations` option, `--revocations`).
 *
 * Format: UTF-8 text, one JSON object per line, one line per revocation:
 * `{"jti":"mB3jv0pQ7xX9cJqYg1a2Rw","expiresAt":1767225605,"reason":"laptop stolen"}`
 * (`reason` and `statusIndex` only when there are). A jti may appear on several lines; the
 * latest expiry wins. Lines whose `expiresAt` has passed are skipped when read.
 *
 * Status-list reservations: `{"statusIndexes":8192}` says every index below 8192 may have
 * been handed out, so the counter resumes there after a restart and an index never names
 * two tokens (draft-ietf-oauth-status-list-20 section 13.3). The highest such line wins;
 * `reserveStatusIndexes` appends one and fsyncs it before it returns the block.
 *
 * Durability: `add` appends its line and fsyncs the file before it resolves, so RevokeJwt
 * answers only once a crash can no longer lose it; adds that arrive while one is being
 * written go together in the next write and fsync (group commit). A crash mid-write may
 * leave a last line without its newline. At the next start a whole entry there is kept
 * (it may have been acknowledged) and gets its newline; a torn one (not JSON: a write cut
 * short, never acknowledged) is cut off with a warning naming its byte offset and length,
 * so the next line starts clean. Any other line that is not an entry stops the start:
 * a damaged file is not guessed at.
 *
 * Compaction: once the file holds many more lines than live entries, it is rewritten
 * with the live entries only, into a temporary file beside it that is fsynced and renamed
 * over it, and the directory is fsynced so the rename itself survives a crash.
 */
import { Buffer } from 'node:buffer';
import { type FileHandle, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { JwtGrpcError } from '../base/errors.js';
import type { Logger } from '../base/log.js';
import { RevocationSet } from './set.js';
import { type RecordProblem, encodeRecord, readRecord, unavailable } from './record-codec.js';
import type { Revocation, RevocationStore } from '../contracts/revocation-store.js';

/** How often the file is checked for compaction. */
const COMPACT_INTERVAL_MS = 60_000;
/** A file shorter than this is never compacted: rewriting it would save nothing worth the I/O. */
const COMPACT_MIN_LINES = 1000;

/**
 * Options of {@link createFileRevocationStore}.
 *
 * @example
 * ```ts
 * const options: FileRevocationStoreOptions = { logger: createStderrLogger(), compactIntervalMs: 60_000 };
 * ```
 */
export interface FileRevocationStoreOptions {
  /** Where warnings (a torn last line, a failed compaction) go. */
  readonly logger: Logger;
  /** How often to check whether the file needs compacting, in ms. Default 60000. */
  readonly compactIntervalMs?: number;
  /** Compact only a file of at least this many lines (and twice the live entries). Default 1000. */
  readonly compactMinLines?: number;
  /** Now, in Unix seconds; for tests. Default `Date.now() / 1000`. */
  readonly clock?: () => number;
}

/**
 * The file store: a {@link RevocationStore} with compaction on demand.
 *
 * @example
 * ```ts
 * // hidden: declare const store: FileRevocationStore;
 * await store.compact(); // rewrite now with the live entries only
 * ```
 */
export interface FileRevocationStore extends RevocationStore {
  /** Rewrites the file with the entries still live (temporary file, fsync, rename, fsync of the directory). */
  compact(): Promise<void>;
}

/** One entry as a line of the file: the record codec's JSON, as Redis publishes it. */
function line(revocation: Revocation): string {
  return `${encodeRecord(revocation)}\n`;
}

/** A status-list reservation as a line: every index below `mark` may have been handed out. */
function markLine(mark: number): string {
  return `${JSON.stringify({ statusIndexes: mark })}\n`;
}

/** A reservation mark read from a line. */
interface Mark {
  readonly statusIndexes: number;
}

/** What `JSON.parse` makes of a line, or this when it is not JSON at all. */
const NOT_JSON = Symbol('not JSON');

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

/** A parsed line as an entry (read by the record codec, as Redis reads its own) or a reservation mark, or what is wrong with it. */
function entryOf(value: unknown): Revocation | Mark | RecordProblem {
  const statusIndexes = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)['statusIndexes'] : undefined;
  if (statusIndexes === undefined) return readRecord((value as { jti?: unknown } | null)?.jti, value);
  if (Number.isSafeInteger(statusIndexes) && (statusIndexes as number) >= 0) return { statusIndexes: statusIndexes as number };
  return { field: 'record', problem: `statusIndexes must be a non-negative integer, got ${JSON.stringify(statusIndexes)}` };
}

/** A line of the file as an entry or a reservation mark, or what is wrong with it. */
function parseLine(text: string): Revocation | Mark | RecordProblem {
  const value = parseJson(text);
  return value === NOT_JSON ? { field: 'record', problem: 'is not JSON' } : entryOf(value);
}

/**
 * What to do with the bytes after the file's last newline: nothing (there are none), keep
 * them (a whole entry whose newline was never written: it may have been acknowledged, so it
 * stays and gets its newline), or cut them (a write cut short: not JSON, so it cannot be a
 * whole entry, and never acknowledged). A last line that is whole JSON but no entry is damage.
 */
type LastLine =
  | { readonly kind: 'none' }
  | { readonly kind: 'whole'; readonly entry: Revocation | Mark }
  | { readonly kind: 'torn' }
  | { readonly kind: 'damaged'; readonly problem: RecordProblem };

function lastLineOf(tail: Buffer): LastLine {
  if (tail.length === 0) return { kind: 'none' };
  const value = parseJson(tail.toString('utf8'));
  // No prefix of a JSON object is JSON: a write cut short never parses.
  if (value === NOT_JSON) return { kind: 'torn' };
  const entry = entryOf(value);
  return 'problem' in entry ? { kind: 'damaged', problem: entry } : { kind: 'whole', entry };
}

async function syncDirectory(path: string): Promise<void> {
  const dir = await open(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

const errorCode = (err: unknown): string => String((err as NodeJS.ErrnoException).code ?? err);

class FileStore implements FileRevocationStore {
  readonly kind = 'file';
  readonly #path: string;
  readonly #logger: Logger;
  readonly #live: RevocationSet;
  readonly #compactIntervalMs: number;
  readonly #compactMinLines: number;
  #file: FileHandle | undefined;
  /** Bytes of the file that hold whole lines: where a failed write is cut back to. */
  #size = 0;
  /** Lines in the file, live or not: compaction compares it with the live entries. */
  #lines = 0;
  /** The status-list reservation mark: every index below it may have been handed out. */
  #statusIndexes = 0;
  #up = false;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  /** Adds waiting for the next write. */
  #pending: { revocation: Revocation; resolve: () => void; reject: (err: Error) => void }[] = [];
  #flushQueued = false;
  /** Writes and compactions run one at a time, in order. */
  #tail: Promise<void> = Promise.resolve();

  constructor(path: string, options: FileRevocationStoreOptions) {
    this.#path = path;
    this.#logger = options.logger;
    this.#live = new RevocationSet(options.clock);
    this.#compactIntervalMs = options.compactIntervalMs ?? COMPACT_INTERVAL_MS;
    this.#compactMinLines = options.compactMinLines ?? COMPACT_MIN_LINES;
  }

  get up(): boolean {
    return this.#up;
  }

  /** The file is damaged at a line: the error names the line and the field at fault. */
  #damaged(lineNumber: number, { field, problem }: RecordProblem): JwtGrpcError {
    const what = field === 'record' ? problem : `field ${field} ${problem}`;
    return unavailable(
      'revocations',
      `revocations file ${this.#path}, line ${lineNumber}: not a revocation entry (${what}); the file is damaged (docs/revocation.md describes its format)`,
    );
  }

  async start(onRevoked: (revocations: readonly Revocation[]) => void): Promise<void> {
    if (this.#file !== undefined || this.#closed)
      throw new JwtGrpcError('ERR_SERVER_STATE', `revocations file ${this.#path}: start called twice, or after close`);
    let bytes = Buffer.alloc(0);
    let existed = true;
    try {
      bytes = await readFile(this.#path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        throw unavailable('revocations', `cannot read the revocations file ${this.#path}: ${errorCode(err)}`, err);
      existed = false;
    }
    // Byte offsets, not characters: a write cut short may end inside a UTF-8 sequence.
    const end = bytes.lastIndexOf(0x0a) + 1;
    const whole = bytes.subarray(0, end).toString('utf8');
    let lineNumber = 0;
    const keep = (parsed: Revocation | Mark): void => {
      if ('statusIndexes' in parsed) this.#statusIndexes = Math.max(this.#statusIndexes, parsed.statusIndexes);
      else this.#live.add(parsed);
      this.#lines += 1;
    };
    for (const entry of whole.split('\n')) {
      lineNumber += 1;
      if (entry === '') continue;
      const parsed = parseLine(entry);
      if ('problem' in parsed) throw this.#damaged(lineNumber, parsed);
      keep(parsed);
    }
    const last = lastLineOf(bytes.subarray(end));
    if (last.kind === 'damaged') throw this.#damaged(lineNumber, last.problem);
    if (last.kind === 'whole') keep(last.entry);
    try {
      this.#file = await open(this.#path, 'a');
      this.#size = end;
      if (last.kind === 'whole') {
        // The entry stays; its newline goes in before anything else is appended after it.
        await this.#file.write('\n');
        await this.#file.datasync();
        this.#size = bytes.length + 1;
        this.#logger.warn(`revocations file ${this.#path}: the last line lacked its newline; kept it and added the newline`, {
          line: lineNumber,
          offset: end,
        });
      } else if (last.kind === 'torn') {
        // A write cut short by a crash: its revocation was never acknowledged. Cut it off so the next line starts clean.
        // Its offset and length only: a cut line is not quoted.
        this.#logger.warn(
          `revocations file ${this.#path}: cut off a torn last line of ${bytes.length - end} bytes at byte offset ${end} (a write cut short, never acknowledged)`,
          {
            line: lineNumber,
            offset: end,
            bytes: bytes.length - end,
          },
        );
        await this.#file.truncate(this.#size);
        await this.#file.datasync();
      }
      if (!existed) await syncDirectory(this.#path);
    } catch (err) {
      await this.#file?.close();
      this.#file = undefined;
      throw unavailable('revocations', `cannot open the revocations file ${this.#path}: ${errorCode(err)}`, err);
    }
    this.#up = true;
    onRevoked([...this.#live.values()]);
    this.#timer = setInterval(() => void this.#compactIfWorthIt(), this.#compactIntervalMs);
    this.#timer.unref();
  }

  add(revocation: Revocation): Promise<void> {
    if (this.#file === undefined || this.#closed)
      return Promise.reject(unavailable('revocations', `revocations file ${this.#path} is not open`));
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ revocation, resolve, reject });
      if (!this.#flushQueued) {
        this.#flushQueued = true;
        void this.#exclusive(() => this.#flush());
      }
    });
  }

  /**
   * Reserves `count` status-list indexes: appends the new mark and fsyncs it before the
   * block is handed out, so no restart hands any of them out again. One write per block.
   */
  reserveStatusIndexes(count: number): Promise<number> {
    if (!Number.isSafeInteger(count) || count <= 0)
      return Promise.reject(
        new JwtGrpcError('ERR_INVALID_ARGUMENT', `reserveStatusIndexes: count must be a positive integer, got ${count}`),
      );
    return this.#exclusive(async () => {
      const file = this.#file;
      if (file === undefined || this.#closed) throw unavailable('revocations', `revocations file ${this.#path} is not open`);
      const first = this.#statusIndexes;
      const text = markLine(first + count);
      try {
        await file.write(text);
        await file.datasync();
      } catch (err) {
        this.#up = false;
        await file.truncate(this.#size).catch(() => undefined);
        throw unavailable('revocations', `cannot write the revocations file ${this.#path}: ${errorCode(err)}`, err);
      }
      this.#size += Buffer.byteLength(text);
      this.#lines += 1;
      this.#statusIndexes = first + count;
      this.#up = true;
      return first;
    });
  }

  compact(): Promise<void> {
    return this.#exclusive(() => this.#compact());
  }

  async close(): Promise<void> {
    if (this.#closed) return this.#tail;
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#tail;
    this.#up = false;
    const file = this.#file;
    this.#file = undefined;
    await file?.close();
  }

  #exclusive<T>(run: () => Promise<T>): Promise<T> {
    const next = this.#tail.then(run);
    this.#tail = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  /** Writes every pending add in one write and one fsync; on failure cuts the file back and rejects them all. */
  async #flush(): Promise<void> {
    this.#flushQueued = false;
    const batch = this.#pending;
    this.#pending = [];
    if (batch.length === 0) return;
    const file = this.#file;
    const text = batch.map(({ revocation }) => line(revocation)).join('');
    try {
      if (file === undefined) throw Object.assign(new Error('closed'), { code: 'closed' });
      await file.write(text);
      await file.datasync();
    } catch (err) {
      this.#up = false;
      // Nothing half-written may stay: a later start would read a torn line, or worse a whole one never acknowledged.
      await file?.truncate(this.#size).catch(() => undefined);
      const error = unavailable('revocations', `cannot write the revocations file ${this.#path}: ${errorCode(err)}`, err);
      for (const { reject } of batch) reject(error);
      return;
    }
    this.#size += Buffer.byteLength(text);
    this.#lines += batch.length;
    this.#up = true;
    for (const { revocation, resolve } of batch) {
      this.#live.add(revocation);
      resolve();
    }
  }

  async #compactIfWorthIt(): Promise<void> {
    this.#live.sweep();
    if (this.#lines < this.#compactMinLines || this.#lines < 2 * this.#live.size) return;
    await this.compact().catch((err: unknown) => {
      this.#logger.warn(`revocations file ${this.#path}: compaction failed, the file stays as it was: ${errorCode(err)}`);
    });
  }

  async #compact(): Promise<void> {
    if (this.#file === undefined) return;
    this.#live.sweep();
    const live = [...this.#live.values()];
    // The reservation mark goes first, and only the highest: indexes never repeat after a compaction either.
    const text = (this.#statusIndexes > 0 ? markLine(this.#statusIndexes) : '') + live.map(line).join('');
    const temporary = `${this.#path}.${process.pid}.compacting`;
    try {
      const out = await open(temporary, 'w');
      try {
        await out.write(text);
        await out.sync();
      } finally {
        await out.close();
      }
      await rename(temporary, this.#path);
      await syncDirectory(this.#path);
    } catch (err) {
      await rm(temporary, { force: true });
      throw err;
    }
    // The old handle points at the file that was renamed over: appends go to the new one from here.
    const previous = this.#file;
    this.#file = await open(this.#path, 'a');
    await previous.close();
    this.#size = Buffer.byteLength(text);
    this.#lines = live.length + (this.#statusIndexes > 0 ? 1 : 0);
  }
}

/**
 * A {@link RevocationStore} in an append-only file (format and guarantees: docs/revocation.md).
 * Nothing is read until `start`.
 *
 * @example
 * ```ts
 * const store = createFileRevocationStore('/var/lib/jwt-grpc/revocations.jsonl', { logger: createStderrLogger() });
 * await store.start((revocations) => console.log(`${revocations.length} revocations loaded`));
 * await store.add({ jti: 'mB3jv0pQ7xX9cJqYg1a2Rw', expiresAt: Math.floor(Date.now() / 1000) + 3600 });
 * await store.close();
 * ```
 */
export function createFileRevocationStore(path: string, options: FileRevocationStoreOptions): FileRevocationStore {
  if (typeof path !== 'string' || path.length === 0)
    throw new JwtGrpcError('ERR_INVALID_OPTION', 'option revocations: must be a file path', { field: 'revocations' });
  return new FileStore(path, options);
}
