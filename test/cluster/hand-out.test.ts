/**
 * A reload handed to every connected worker: sent to each, waited on until each acknowledges
 * this generation (a stale acknowledgement counts for nothing), a worker that exits or stays
 * silent not holding the reload up, and an error a worker reports logged with its pid.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { recordingLogger } from '../../bench/kit/jwt-servers.js';
import { HandOut, sendTo } from '../../src/cluster/hand-out.js';
import type { PrimaryMessage } from '../../src/cluster/messages.js';
import { FakeWorker } from './fake-worker.js';

/** What the logger said, one `level message` line each. */
const said = (log: ReturnType<typeof recordingLogger>): string[] => log.lines.map(({ level, message }) => `${level} ${message}`);

const message = (generation: number): PrimaryMessage => ({ type: 'jwt-grpc:keys', generation, jwks: { keys: [] } });

async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return done;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('sendTo', () => {
  it('sends to a connected worker only', () => {
    const [up, gone] = [new FakeWorker(), new FakeWorker()];
    gone.connected = false;
    sendTo(up.asWorker, message(1));
    sendTo(gone.asWorker, message(1));
    expect([up.sent, gone.sent]).toEqual([[message(1)], []]);
  });
});

describe('HandOut', () => {
  it('sends to each connected worker and resolves once each acknowledged this generation', async () => {
    const log = recordingLogger();
    const handOut = new HandOut('keys', log);
    const [a, b, gone] = [new FakeWorker(), new FakeWorker(), new FakeWorker()];
    gone.connected = false;
    const sent = handOut.send([a.asWorker, b.asWorker, gone.asWorker], 2, message(2));
    expect([a.sent, b.sent, gone.sent]).toEqual([[message(2)], [message(2)], []]);
    handOut.acknowledged(a.asWorker, 2, undefined);
    // An acknowledgement of an earlier generation is not one of this.
    handOut.acknowledged(b.asWorker, 1, undefined);
    expect(await settled(sent)).toBe(false);
    handOut.acknowledged(b.asWorker, 2, undefined);
    await sent;
    expect(said(log)).toEqual(['info reloaded keys handed to 2 workers']);
  });

  it('logs the error a worker reports, with its pid, and does not wait on a worker that exited', async () => {
    const log = recordingLogger();
    const handOut = new HandOut('policy', log);
    const [a, b] = [new FakeWorker(), new FakeWorker()];
    const sent = handOut.send([a.asWorker, b.asWorker], 1, message(1));
    handOut.acknowledged(a.asWorker, 1, 'rule 2 names no method');
    handOut.exited(b.asWorker);
    await sent;
    expect(said(log)).toEqual([
      `error worker ${a.process.pid} did not put the reloaded policy in use: rule 2 names no method`,
      'info reloaded policy handed to 2 workers',
    ]);
  });

  it('stops waiting on a silent worker after 10 s and says so', async () => {
    vi.useFakeTimers();
    const log = recordingLogger();
    const handOut = new HandOut('keys', log);
    const silent = new FakeWorker();
    const sent = handOut.send([silent.asWorker], 1, message(1));
    await vi.advanceTimersByTimeAsync(9_999);
    expect(await settled(sent)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await sent;
    expect(said(log)).toEqual([
      `error worker ${silent.process.pid} did not put the reloaded keys in use: no answer`,
      'info reloaded keys handed to 1 workers',
    ]);
  });
});
