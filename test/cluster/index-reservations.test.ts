/** A worker's status list index blocks, reserved by the primary over IPC (faked here). */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { IndexReservations } from '../../src/cluster/index-reservations.js';
import type { WorkerMessage } from '../../src/cluster/messages.js';

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

function reservations() {
  const sent: WorkerMessage[] = [];
  return { sent, reservations: new IndexReservations((message) => sent.push(message)) };
}

describe('IndexReservations', () => {
  it('asks the primary for a block and resolves with the first index its answer names, by id', async () => {
    const { sent, reservations: r } = reservations();
    const a = r.reserve(100);
    const b = r.reserve(50);
    expect(sent).toEqual([
      { type: 'jwt-grpc:reserve-status-indexes', id: 1, count: 100 },
      { type: 'jwt-grpc:reserve-status-indexes', id: 2, count: 50 },
    ]);
    r.answered({ type: 'jwt-grpc:status-indexes', id: 2, first: 700 });
    r.answered({ type: 'jwt-grpc:status-indexes', id: 1, first: 600 });
    expect(await Promise.all([a, b])).toEqual([600, 700]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects with the primary's reason when it reserved none", async () => {
    const { reservations: r } = reservations();
    const pending = r.reserve(10);
    r.answered({ type: 'jwt-grpc:status-indexes', id: 1, error: 'the revocation store keeps no status list index counter' });
    await expect(pending).rejects.toThrow(
      'the primary reserved no status list indexes: the revocation store keeps no status list index counter',
    );
  });

  it('rejects when the primary does not answer within 10 s, and drops the late answer', async () => {
    const { reservations: r } = reservations();
    const pending = r.reserve(10);
    const outcome = pending.catch((err: unknown) => err);
    await vi.advanceTimersByTimeAsync(9_999);
    await vi.advanceTimersByTimeAsync(1);
    expect(((await outcome) as Error).message).toBe('the primary did not reserve status list indexes within 10000 ms');
    r.answered({ type: 'jwt-grpc:status-indexes', id: 1, first: 5 });
    r.answered({ type: 'jwt-grpc:status-indexes', id: 99, first: 5 });
  });
});
