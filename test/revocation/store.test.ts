/**
 * The file store (fsync before an add resolves, torn and damaged lines, compaction, restart),
 * without a server. test/revocation/set.test.ts holds the in-memory set, revocations.test.ts
 * what a server holds over its store.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createFileRevocationStore } from '../../src/revocation/file-store.js';
import type { Revocation } from '../../src/contracts/revocation-store.js';
import { JwtGrpcError } from '../../src/base/errors.js';
import { recordingLogger } from '../../bench/kit/jwt-servers.js';

const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-revocations-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

let files = 0;
const freshFile = (): string => join(dir, `revocations-${++files}.jsonl`);

/** Starts a store on `file` and returns it with what it loaded. */
async function started(file: string, clock?: () => number) {
  const logger = recordingLogger();
  const store = createFileRevocationStore(file, { logger, ...(clock !== undefined && { clock }) });
  const loaded: Revocation[] = [];
  await store.start((revocations) => loaded.push(...revocations));
  return { store, loaded, logger };
}

describe('the file store', () => {
  it('appends one JSON line per revocation and syncs it to disk before add resolves', async () => {
    const file = freshFile();
    const { store } = await started(file);
    const events: string[] = [];
    const probe = await open(join(dir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    const write = proto.write;
    const datasync = proto.datasync;
    vi.spyOn(proto, 'write').mockImplementation(function (this: FileHandle, ...args: unknown[]) {
      events.push('write');
      return (write as (...a: unknown[]) => Promise<unknown>).apply(this, args);
    } as FileHandle['write']);
    vi.spyOn(proto, 'datasync').mockImplementation(async function (this: FileHandle) {
      await datasync.call(this);
      events.push('datasync');
    });
    await store.add({ jti: 'one', expiresAt: Date.now() / 1000 + 60, reason: 'why' });
    events.push('resolved');
    expect(events).toEqual(['write', 'datasync', 'resolved']);
    // Adds that arrive together share one write and one fsync.
    events.length = 0;
    await Promise.all(['a', 'b', 'c'].map((jti) => store.add({ jti, expiresAt: Date.now() / 1000 + 60 })));
    expect(events.filter((event) => event === 'datasync').length).toBeLessThanOrEqual(2);
    await store.close();
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((line) => (JSON.parse(line) as Revocation).jti)).toEqual(['one', 'a', 'b', 'c']);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ jti: 'one', reason: 'why' });
  });

  it('a write that fails halfway rejects the add, cuts the half line off and reports down until a write succeeds', async () => {
    const file = freshFile();
    const { store } = await started(file);
    await store.add({ jti: 'before', expiresAt: 2e9 });
    const probe = await open(join(dir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    const write = proto.write as (this: FileHandle, text: string) => Promise<unknown>;
    vi.spyOn(proto, 'write').mockImplementationOnce(async function (this: FileHandle, text: unknown) {
      await write.call(this, String(text).slice(0, 12)); // the disk fills up mid-line
      throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    } as FileHandle['write']);
    await expect(store.add({ jti: 'lost', expiresAt: 2e9 })).rejects.toMatchObject({
      code: 'ERR_REVOCATION_STORE_UNAVAILABLE',
      message: expect.stringContaining('ENOSPC'),
    });
    expect(store.up).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe(`${JSON.stringify({ jti: 'before', expiresAt: 2e9 })}\n`);
    await store.add({ jti: 'after', expiresAt: 2e9 });
    expect(store.up).toBe(true);
    await store.close();
    const reread = await started(file);
    expect(reread.loaded.map((r) => r.jti).sort()).toEqual(['after', 'before']);
    await reread.store.close();
  });

  it('cuts off a torn last line with one warning naming its byte offset and length, never its bytes, so the next line starts clean', async () => {
    const file = freshFile();
    const later = Math.floor(Date.now() / 1000) + 600;
    const kept = `${JSON.stringify({ jti: 'kept-é', expiresAt: later })}\n`;
    // Cut inside a two-byte character: the offset counts bytes.
    const torn = Buffer.from('{"jti":"torn-secretish-é', 'utf8').subarray(0, -1);
    writeFileSync(file, Buffer.concat([Buffer.from(kept), torn]));
    const { store, loaded, logger } = await started(file);
    expect(loaded.map((r) => r.jti)).toEqual(['kept-é']);
    const offset = Buffer.byteLength(kept);
    expect(logger.lines.filter((line) => line.level === 'warn')).toEqual([
      {
        level: 'warn',
        message: expect.stringContaining(`torn last line of ${torn.length} bytes at byte offset ${offset}`),
        fields: { line: 2, offset, bytes: torn.length },
      },
    ]);
    expect(JSON.stringify(logger.lines)).not.toContain('torn-secretish');
    expect(readFileSync(file).length).toBe(offset);
    await store.add({ jti: 'next', expiresAt: later });
    await store.close();
    const again = await started(file);
    expect(again.loaded.map((r) => r.jti).sort()).toEqual(['kept-é', 'next']);
    await again.store.close();
  });

  it('keeps a whole last entry that lacks its newline, and adds the newline before the next entry', async () => {
    const file = freshFile();
    const later = Math.floor(Date.now() / 1000) + 600;
    const first = JSON.stringify({ jti: 'first', expiresAt: later });
    const last = JSON.stringify({ jti: 'no-newline', expiresAt: later, reason: 'crash before the newline' });
    writeFileSync(file, `${first}\n${last}`);
    const { store, loaded, logger } = await started(file);
    expect(loaded.map((r) => r.jti).sort()).toEqual(['first', 'no-newline']);
    expect(logger.lines.filter((line) => line.level === 'warn')).toEqual([
      expect.objectContaining({ message: expect.stringContaining('lacked its newline; kept it') }),
    ]);
    expect(readFileSync(file, 'utf8')).toBe(`${first}\n${last}\n`);
    await store.add({ jti: 'next', expiresAt: later });
    await store.close();
    expect(
      readFileSync(file, 'utf8')
        .split('\n')
        .map((line) => (line === '' ? '' : (JSON.parse(line) as Revocation).jti)),
    ).toEqual(['first', 'no-newline', 'next', '']);
    const again = await started(file);
    expect(again.loaded.map((r) => r.jti).sort()).toEqual(['first', 'next', 'no-newline']);
    expect(again.logger.lines.filter((line) => line.level === 'warn')).toEqual([]);
    await again.store.close();
  });

  it('refuses to start on a last line without newline that is JSON but no entry: damage, not a write cut short', async () => {
    const file = freshFile();
    writeFileSync(file, `${JSON.stringify({ jti: 'x', expiresAt: 2e9 })}\n{"jti":"y"}`);
    const failure = await createFileRevocationStore(file, { logger: recordingLogger() })
      .start(() => undefined)
      .catch((err: unknown) => err);
    expect(failure).toMatchObject({
      code: 'ERR_REVOCATION_STORE_UNAVAILABLE',
      message: expect.stringMatching(/line 2: not a revocation entry/),
    });
  });

  it('refuses to start on a damaged line that is not the last', async () => {
    const file = freshFile();
    writeFileSync(file, `not json\n${JSON.stringify({ jti: 'x', expiresAt: 2e9 })}\n`);
    const store = createFileRevocationStore(file, { logger: recordingLogger() });
    const failure = await store.start(() => undefined).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(JwtGrpcError);
    expect(failure).toMatchObject({
      code: 'ERR_REVOCATION_STORE_UNAVAILABLE',
      message: expect.stringMatching(/line 1: not a revocation entry/),
    });
  });

  it('skips expired entries when read, and compaction rewrites the file with the live ones only', async () => {
    const file = freshFile();
    let now = 1_000_000;
    const { store } = await started(file, () => now);
    for (let i = 0; i < 10; i++) await store.add({ jti: `short-${i}`, expiresAt: now + 10 });
    await store.add({ jti: 'long', expiresAt: now + 1000 });
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(11);
    now += 20;
    await store.compact();
    expect(readFileSync(file, 'utf8')).toBe(`${JSON.stringify({ jti: 'long', expiresAt: 1_001_000 })}\n`);
    // Appends after a compaction go to the new file.
    await store.add({ jti: 'after', expiresAt: now + 100 });
    await store.close();
    expect(
      readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as Revocation).jti),
    ).toEqual(['long', 'after']);
    const reread = await started(file, () => now);
    expect(reread.loaded.map((r) => r.jti).sort()).toEqual(['after', 'long']);
    await reread.store.close();
    now += 2000;
    const expired = await started(file, () => now);
    expect(expired.loaded).toEqual([]);
    await expired.store.close();
  });

  it('reports up while the file is open, and refuses adds once closed', async () => {
    const { store } = await started(freshFile());
    expect(store.up).toBe(true);
    await store.close();
    await store.close();
    expect(store.up).toBe(false);
    await expect(store.add({ jti: 'x', expiresAt: 2e9 })).rejects.toMatchObject({ code: 'ERR_REVOCATION_STORE_UNAVAILABLE' });
  });

  it('reserves status-list indexes durably: a restart and a compaction resume above every block handed out', async () => {
    const file = freshFile();
    const { store } = await started(file);
    expect(await store.reserveStatusIndexes?.(4096)).toBe(0);
    expect(await Promise.all([store.reserveStatusIndexes?.(4096), store.reserveStatusIndexes?.(10)])).toEqual([4096, 8192]);
    await store.add({ jti: 'kept', expiresAt: 2e9, statusIndex: 5 });
    await store.close();
    expect(readFileSync(file, 'utf8')).toContain('{"statusIndexes":8202}\n');
    const again = await started(file);
    expect(again.loaded).toEqual([{ jti: 'kept', expiresAt: 2e9, statusIndex: 5 }]);
    expect(await again.store.reserveStatusIndexes?.(4096)).toBe(8202);
    await again.store.compact();
    // The compacted file keeps one mark, the highest, and the live entries.
    expect(readFileSync(file, 'utf8')).toBe(
      `{"statusIndexes":12298}\n${JSON.stringify({ jti: 'kept', expiresAt: 2e9, statusIndex: 5 })}\n`,
    );
    await again.store.close();
    const compacted = await started(file);
    expect(await compacted.store.reserveStatusIndexes?.(1)).toBe(12298);
    await compacted.store.close();
    await expect(compacted.store.reserveStatusIndexes?.(1)).rejects.toMatchObject({ code: 'ERR_REVOCATION_STORE_UNAVAILABLE' });
  });

  // The record codec reads each line: a line Redis would refuse, the file refuses too, at start.
  it.each([
    [
      `${JSON.stringify({ jti: 'ok', expiresAt: 2e9 })}\n${JSON.stringify({ jti: 'bad', expiresAt: 2e9, statusIndex: -1 })}\n`,
      /line 2: not a revocation entry \(field statusIndex must be a non-negative integer, got -1\)/,
    ],
    [JSON.stringify({ jti: 'bad', expiresAt: 2e9, statusIndex: -3 }), /line 1: .*field statusIndex must be a non-negative integer, got -3/],
    ['{"jti":"x","expiresAt":2000000000,"reason":5}\n', /field reason must be a string/],
  ])('refuses to start on a bad field, naming the line and the field: %j', async (text, message) => {
    const file = freshFile();
    writeFileSync(file, text);
    await expect(started(file)).rejects.toMatchObject({
      code: 'ERR_REVOCATION_STORE_UNAVAILABLE',
      field: 'revocations',
      message: expect.stringMatching(message),
    });
  });

  it('refuses a damaged reservation mark', async () => {
    const file = freshFile();
    writeFileSync(file, '{"statusIndexes":-1}\n');
    await expect(started(file)).rejects.toMatchObject({
      code: 'ERR_REVOCATION_STORE_UNAVAILABLE',
      message: expect.stringContaining('line 1'),
    });
  });
});
