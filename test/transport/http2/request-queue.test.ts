/**
 * The request messages of a client- or bidi-streaming call as an async iterator: messages in
 * order, the stream paused at the high-water mark and resumed at half of it, end and failure
 * passed to the reader, and nothing taken after the handler stopped reading.
 */
import { describe, expect, it } from 'vitest';
import { REQUEST_QUEUE_HIGH_WATER_MARK } from '../../../src/transport/http2/defaults.js';
import { RequestQueue } from '../../../src/transport/http2/request-queue.js';
import type { H2Stream } from '../../../src/transport/http2/wire/stream.js';

function queue(): { flow: string[]; requests: RequestQueue<number> } {
  const flow: string[] = [];
  const stream = { pause: () => flow.push('pause'), resume: () => flow.push('resume') } as unknown as H2Stream;
  return { flow, requests: new RequestQueue<number>(stream) };
}

describe('RequestQueue', () => {
  it('gives the messages pushed in order, then done once ended', async () => {
    const { requests } = queue();
    requests.push(1);
    requests.push(2);
    requests.end();
    const seen: number[] = [];
    for await (const n of requests) seen.push(n);
    expect(seen).toEqual([1, 2]);
  });

  it('hands a message to a reader already waiting, and ends a waiting reader', async () => {
    const { requests } = queue();
    const first = requests.next();
    requests.push(7);
    expect(await first).toEqual({ value: 7, done: false });
    const second = requests.next();
    requests.end();
    expect(await second).toEqual({ value: undefined, done: true });
  });

  it('pauses the stream at the high-water mark and resumes it once half is read', async () => {
    const { flow, requests } = queue();
    for (let i = 0; i < REQUEST_QUEUE_HIGH_WATER_MARK - 1; i++) requests.push(i);
    expect(flow).toEqual([]);
    requests.push(99);
    requests.push(100);
    expect(flow).toEqual(['pause']);
    for (let i = 0; i < REQUEST_QUEUE_HIGH_WATER_MARK / 2; i++) await requests.next();
    expect(flow).toEqual(['pause']);
    await requests.next();
    expect(flow).toEqual(['pause', 'resume']);
  });

  it('rejects the waiting reader, and every later read, with the failure, dropping what was queued', async () => {
    const { requests } = queue();
    const waiting = requests.next();
    const failure = new Error('stream reset');
    requests.fail(failure);
    await expect(waiting).rejects.toBe(failure);
    requests.push(1);
    await expect(requests.next()).rejects.toBe(failure);
    requests.fail(new Error('second'));
    await expect(requests.next()).rejects.toBe(failure);
  });

  it('drops queued and later messages once the reader returns, resuming a paused stream', async () => {
    const { flow, requests } = queue();
    for (let i = 0; i < REQUEST_QUEUE_HIGH_WATER_MARK; i++) requests.push(i);
    expect(await requests.return()).toEqual({ value: undefined, done: true });
    expect(flow).toEqual(['pause', 'resume']);
    requests.push(1);
    expect(await requests.next()).toEqual({ value: undefined, done: true });
  });

  it('refuses a second next() before the first settled', async () => {
    const { requests } = queue();
    const first = requests.next();
    await expect(requests.next()).rejects.toThrow('RequestQueue: next() called again before the previous one settled');
    requests.push(1);
    await first;
  });
});
