/**
 * The StateDistributor holds what every worker gets (keys, policy, revocations) and
 * hands reloads to every live worker, over fake workers: no process is forked.
 */
import { describe, expect, it } from 'vitest';
import { StateDistributor } from '../../src/cluster/distributor.js';
import { generateEphemeralKeys } from '../../src/keys/ephemeral.js';
import type { KeySet } from '../../src/keys/key-set.js';
import { silentLogger } from '../../src/base/log.js';
import type { JwtPolicy } from '../../src/policy/document.js';
import { Revocations } from '../../src/revocation/revocations.js';
import { recordingLogger } from '../../bench/kit/jwt-servers.js';
import { FakeWorker } from './fake-worker.js';

const POLICY: JwtPolicy = { callers: { billing: { subjects: ['svc-billing'] } } } as unknown as JwtPolicy;

function kidsOf(message: unknown): string[] {
  return (message as { jwks: { keys: { kid: string }[] } }).jwks.keys.map((key) => key.kid).sort();
}

async function distributor(
  options: { loadKeys?: () => Promise<KeySet>; loadPolicy?: () => Promise<JwtPolicy>; workers?: FakeWorker[] } = {},
) {
  const workers = options.workers ?? [new FakeWorker(), new FakeWorker(), new FakeWorker()];
  const logger = recordingLogger();
  const state = new StateDistributor({
    keys: await generateEphemeralKeys(silentLogger),
    policy: undefined,
    revocations: new Revocations(),
    workers: () => workers.map((worker) => worker.asWorker),
    loadKeys: options.loadKeys,
    loadPolicy: options.loadPolicy,
    logger,
  });
  return { state, workers, logger };
}

/** Resolves once `promise` settles, or says it has not: the hand-out waits on every worker. */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe('StateDistributor', () => {
  it('hands reloaded keys to every live worker and resolves once each has put them in use or exited', async () => {
    const next = await generateEphemeralKeys(silentLogger);
    const { state, workers } = await distributor({ loadKeys: async () => next });
    const [a, b, c] = workers as [FakeWorker, FakeWorker, FakeWorker];
    const reload = state.reloadKeys();
    await new Promise((resolve) => setImmediate(resolve));
    for (const worker of workers) {
      expect(worker.sentOf('jwt-grpc:keys')).toHaveLength(1);
      expect(worker.sentOf('jwt-grpc:keys')[0]).toMatchObject({ generation: 1 });
      expect(kidsOf(worker.sentOf('jwt-grpc:keys')[0])).toEqual(next.keys.map((k) => k.kid).sort());
    }
    state.keysApplied(a.asWorker, { type: 'jwt-grpc:keys-applied', generation: 1 });
    state.keysApplied(b.asWorker, { type: 'jwt-grpc:keys-applied', generation: 1 });
    expect(await settledYet(reload)).toBe(false);
    c.exit(1);
    state.exited(c.asWorker);
    // At once: the hand-out waits for no answer from a worker that exited.
    expect(await settledYet(reload)).toBe(true);
    expect(await reload).toBe(next);
    expect(state.keys).toBe(next);
  });

  it('gives a worker that says hello later the reloaded keys and policy in its start message', async () => {
    const next = await generateEphemeralKeys(silentLogger);
    const { state, workers } = await distributor({ loadKeys: async () => next, loadPolicy: async () => POLICY, workers: [] });
    await state.reloadKeys();
    await state.reloadPolicy();
    const late = new FakeWorker();
    state.hello(late.asWorker, { grpc: 50051, discovery: 8080 });
    const [start] = late.sentOf('jwt-grpc:start');
    expect(kidsOf(start)).toEqual(next.keys.map((k) => k.kid).sort());
    expect(start).toMatchObject({ policy: POLICY, revocations: [], ports: { grpc: 50051, discovery: 8080 } });
    expect(workers).toEqual([]);
  });

  it('hands a reloaded policy to every live worker with its generation', async () => {
    const { state, workers } = await distributor({ loadPolicy: async () => POLICY });
    const reload = state.reloadPolicy();
    await new Promise((resolve) => setImmediate(resolve));
    for (const worker of workers) {
      expect(worker.sentOf('jwt-grpc:policy')).toEqual([{ type: 'jwt-grpc:policy', generation: 1, policy: POLICY }]);
      state.policyApplied(worker.asWorker, { type: 'jwt-grpc:policy-applied', generation: 1 });
    }
    expect(await reload).toBe(POLICY);
    expect(state.policy).toBe(POLICY);
  });

  it('logs a worker that could not apply the reload by pid, and still completes', async () => {
    const next = await generateEphemeralKeys(silentLogger);
    const { state, workers, logger } = await distributor({ loadKeys: async () => next, workers: [new FakeWorker()] });
    const reload = state.reloadKeys();
    await new Promise((resolve) => setImmediate(resolve));
    state.keysApplied(workers[0]!.asWorker, { type: 'jwt-grpc:keys-applied', generation: 1, error: 'bad key' });
    await reload;
    expect(logger.lines.find((l) => l.level === 'error')?.message).toBe(
      `worker ${workers[0]!.process.pid} did not put the reloaded keys in use: bad key`,
    );
  });

  it('sends nothing when the reload fails, and keeps the keys in use', async () => {
    const { state, workers } = await distributor({ loadKeys: () => Promise.reject(new Error('unreadable key file')) });
    const before = state.keys;
    await expect(state.reloadKeys()).rejects.toThrow('unreadable key file');
    for (const worker of workers) expect(worker.sent).toEqual([]);
    expect(state.keys).toBe(before);
  });

  it('refuses a reload without a loader (ERR_SERVER_STATE) and says SIGHUP has nothing to reload', async () => {
    const { state } = await distributor();
    await expect(state.reloadKeys()).rejects.toMatchObject({ code: 'ERR_SERVER_STATE' });
    await expect(state.reloadPolicy()).rejects.toMatchObject({ code: 'ERR_SERVER_STATE' });
    expect(state.reloads()).toEqual({ keys: undefined, policy: undefined });
  });

  it('answers a reservation of status list indexes with an error when the store keeps no counter', async () => {
    const { state, workers } = await distributor();
    state.reserveStatusIndexes(workers[0]!.asWorker, { type: 'jwt-grpc:reserve-status-indexes', id: 4, count: 100 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(workers[0]!.sentOf('jwt-grpc:status-indexes')).toEqual([
      { type: 'jwt-grpc:status-indexes', id: 4, error: 'the revocation store keeps no status list index counter' },
    ]);
  });
});
