/**
 * Revocations across a cluster: a worker's relay store that sends each revoke to the primary
 * and waits for its answer (refusals, a closing worker and a silent primary included), and the
 * primary's side that checks what a worker sends, writes it, and broadcasts it to every worker.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PrimaryRelayStore, broadcastRevoked, serveWorkerRevoke } from '../../src/cluster/revocations.js';
import type { WorkerMessage } from '../../src/cluster/messages.js';
import { silentLogger } from '../../src/base/log.js';
import { Revocations } from '../../src/revocation/revocations.js';
import { localReserve } from '../../src/revocation/status-list/allocator.js';
import type { Revocation, RevocationStore } from '../../src/contracts/revocation-store.js';
import { FakeWorker } from './fake-worker.js';

const FUTURE = 4_000_000_000;

afterEach(() => {
  vi.useRealTimers();
});

function relay(initial: readonly Revocation[] = []): { store: PrimaryRelayStore; sent: WorkerMessage[] } {
  const sent: WorkerMessage[] = [];
  return { store: new PrimaryRelayStore(initial, (message) => void sent.push(message), localReserve()), sent };
}

describe('PrimaryRelayStore', () => {
  it('hands what arrived before start to the listener on start, and later arrivals at once', async () => {
    const { store } = relay([{ jti: 'a', expiresAt: FUTURE }]);
    store.receive([{ jti: 'b', expiresAt: FUTURE }]);
    const got: string[][] = [];
    await store.start((list) => got.push(list.map((r) => r.jti)));
    store.receive([{ jti: 'c', expiresAt: FUTURE }]);
    expect(got).toEqual([['a', 'b'], ['c']]);
    expect(store.kind).toBe('primary');
  });

  it("sends a revoke to the primary and resolves on the primary's answer to its id", async () => {
    const { store, sent } = relay();
    const first = store.add({ jti: 'x', expiresAt: FUTURE });
    const second = store.add({ jti: 'y', expiresAt: FUTURE });
    expect(sent).toEqual([
      { type: 'jwt-grpc:revoke', id: 0, revocation: { jti: 'x', expiresAt: FUTURE } },
      { type: 'jwt-grpc:revoke', id: 1, revocation: { jti: 'y', expiresAt: FUTURE } },
    ]);
    store.settle(1, 'disk full');
    store.settle(0, undefined);
    store.settle(7, undefined);
    await expect(first).resolves.toBeUndefined();
    await expect(second).rejects.toMatchObject({ code: 'ERR_REVOCATION_STORE_UNAVAILABLE', message: 'disk full' });
  });

  it('rejects a revoke the primary does not answer within 10 s', async () => {
    vi.useFakeTimers();
    const { store } = relay();
    const pending = store.add({ jti: 'x', expiresAt: FUTURE });
    const outcome = expect(pending).rejects.toMatchObject({
      code: 'ERR_REVOCATION_STORE_UNAVAILABLE',
      message: 'the cluster primary did not answer within 10000 ms',
    });
    vi.advanceTimersByTime(10_000);
    await outcome;
  });

  it('rejects what is pending when it closes, and every revoke after, and reports down', async () => {
    const { store, sent } = relay();
    const pending = store.add({ jti: 'x', expiresAt: FUTURE });
    expect(store.up).toBe(true);
    await store.close();
    expect(store.up).toBe(false);
    await expect(pending).rejects.toMatchObject({ code: 'ERR_REVOCATION_STORE_UNAVAILABLE', message: 'this worker is closing' });
    await expect(store.add({ jti: 'y', expiresAt: FUTURE })).rejects.toMatchObject({
      code: 'ERR_REVOCATION_STORE_UNAVAILABLE',
      message: 'this worker is closing: no revocation reaches the primary',
    });
    expect(sent).toHaveLength(1);
  });

  it('reserves status-list indexes through the function it was given', async () => {
    const { store } = relay();
    expect([await store.reserveStatusIndexes(4), await store.reserveStatusIndexes(4)]).toEqual([0, 4]);
  });
});

describe('serveWorkerRevoke', () => {
  function primary(store?: RevocationStore): { revocations: Revocations; asker: FakeWorker; other: FakeWorker } {
    return { revocations: new Revocations(store), asker: new FakeWorker(), other: new FakeWorker() };
  }

  it('writes a revoke, broadcasts it to every worker, then answers the asker', async () => {
    const { revocations, asker, other } = primary();
    const revocation = { jti: 'x', expiresAt: FUTURE, statusIndex: 3 };
    serveWorkerRevoke(
      revocations,
      () => [asker.asWorker, other.asWorker],
      asker.asWorker,
      { type: 'jwt-grpc:revoke', id: 5, revocation },
      silentLogger,
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(revocations.has('x')).toBe(true);
    expect(other.sent).toEqual([{ type: 'jwt-grpc:revoked', revocations: [revocation] }]);
    expect(asker.sent).toEqual([
      { type: 'jwt-grpc:revoked', revocations: [revocation] },
      { type: 'jwt-grpc:revoke-done', id: 5 },
    ]);
  });

  it('refuses a malformed revocation without writing it', async () => {
    const malformed: unknown[] = [
      undefined,
      { jti: '', expiresAt: FUTURE },
      { jti: 'x', expiresAt: Number.POSITIVE_INFINITY },
      { jti: 'x', expiresAt: '1' },
      { jti: 'x', expiresAt: FUTURE, reason: 5 },
      { jti: 'x', expiresAt: FUTURE, statusIndex: -1 },
      { jti: 'x', expiresAt: FUTURE, statusIndex: 1.5 },
    ];
    for (const revocation of malformed) {
      const { revocations, asker } = primary();
      serveWorkerRevoke(
        revocations,
        () => [asker.asWorker],
        asker.asWorker,
        { type: 'jwt-grpc:revoke', id: 1, revocation } as never,
        silentLogger,
      );
      expect(asker.sent, JSON.stringify(revocation)).toEqual([
        { type: 'jwt-grpc:revoke-done', id: 1, error: 'the primary refused a malformed revocation' },
      ]);
      expect(revocations.size).toBe(0);
    }
  });

  it("answers with the store's refusal and logs it with the jti, broadcasting nothing", async () => {
    const failing: RevocationStore = {
      kind: 'file',
      up: true,
      start: async () => {},
      add: () => Promise.reject(new Error('disk full')),
      close: async () => {},
    };
    const { revocations, asker, other } = primary(failing);
    const errors: unknown[] = [];
    serveWorkerRevoke(
      revocations,
      () => [asker.asWorker, other.asWorker],
      asker.asWorker,
      { type: 'jwt-grpc:revoke', id: 2, revocation: { jti: 'x', expiresAt: FUTURE } },
      {
        ...silentLogger,
        error: (message, fields) => void errors.push([message, fields]),
      },
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(asker.sent).toEqual([{ type: 'jwt-grpc:revoke-done', id: 2, error: 'disk full' }]);
    expect(other.sent).toEqual([]);
    expect(errors).toEqual([['revocation store refused a revocation: disk full', { jti: 'x' }]]);
  });

  it('sends nothing to an asker that is gone', async () => {
    const { revocations, asker } = primary();
    asker.connected = false;
    serveWorkerRevoke(
      revocations,
      () => [],
      asker.asWorker,
      { type: 'jwt-grpc:revoke', id: 3, revocation: { jti: 'x', expiresAt: FUTURE } },
      silentLogger,
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(asker.sent).toEqual([]);
    expect(revocations.has('x')).toBe(true);
  });
});

describe('broadcastRevoked', () => {
  it('sends to connected workers only, and nothing for no revocations', () => {
    const [up, gone] = [new FakeWorker(), new FakeWorker()];
    gone.connected = false;
    broadcastRevoked([up.asWorker, gone.asWorker], []);
    expect(up.sent).toEqual([]);
    broadcastRevoked([up.asWorker, gone.asWorker], [{ jti: 'x', expiresAt: FUTURE }]);
    expect(up.sent).toEqual([{ type: 'jwt-grpc:revoked', revocations: [{ jti: 'x', expiresAt: FUTURE }] }]);
    expect(gone.sent).toEqual([]);
  });
});
