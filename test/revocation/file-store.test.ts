/**
 * The file store reads its lines with the record codec: a line Redis would refuse, the
 * file refuses too, at start, naming the line and the field.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFileRevocationStore } from '../../src/revocation/file-store.js';
import { recordingLogger } from '../../bench/kit/jwt-servers.js';

const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-file-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function startOn(name: string, text: string): Promise<unknown> {
  const file = join(dir, name);
  writeFileSync(file, text);
  const store = createFileRevocationStore(file, { logger: recordingLogger() });
  try {
    await store.start(() => undefined);
    return undefined;
  } catch (err) {
    return err;
  } finally {
    await store.close();
  }
}

describe('createFileRevocationStore reading its file', () => {
  it('refuses a negative statusIndex, naming the line and the field', async () => {
    const text = `${JSON.stringify({ jti: 'ok', expiresAt: 2e9 })}\n${JSON.stringify({ jti: 'bad', expiresAt: 2e9, statusIndex: -1 })}\n`;
    const failure = await startOn('negative.jsonl', text);
    expect(failure).toMatchObject({
      code: 'ERR_REVOCATION_STORE_UNAVAILABLE',
      field: 'revocations',
      message: expect.stringMatching(/line 2: not a revocation entry \(field statusIndex must be a non-negative integer, got -1\)/),
    });
  });

  it('refuses a negative statusIndex on a last line without its newline too', async () => {
    const failure = await startOn('negative-last.jsonl', JSON.stringify({ jti: 'bad', expiresAt: 2e9, statusIndex: -3 }));
    expect(failure).toMatchObject({ message: expect.stringMatching(/line 1: .*field statusIndex must be a non-negative integer, got -3/) });
  });

  it('names the field of any other bad entry, and keeps a good file', async () => {
    expect(await startOn('reason.jsonl', '{"jti":"x","expiresAt":2000000000,"reason":5}\n')).toMatchObject({
      message: expect.stringContaining('field reason must be a string'),
    });
    expect(await startOn('good.jsonl', '{"jti":"x","expiresAt":2000000000,"statusIndex":0}\n')).toBeUndefined();
  });
});
