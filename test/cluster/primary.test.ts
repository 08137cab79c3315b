/**
 * runPrimary as its three parts compose: fake workers from an injected fork speak the
 * IPC protocol, so the routing between supervisor, distributor and workers is checked
 * without a process. The cluster suites (test/cluster/cluster.test.ts, test/reliability)
 * run the same code over real node:cluster workers.
 */
import { connect } from 'node:net';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ClusterHandle } from '../../src/cluster/handle.js';
import { resolveClusterOptions } from '../../src/cluster/options.js';
import { runPrimary } from '../../src/cluster/primary.js';
import { generateEphemeralKeys } from '../../src/keys/ephemeral.js';
import type { KeySet } from '../../src/keys/key-set.js';
import { silentLogger } from '../../src/base/log.js';
import { recordingLogger } from '../../bench/kit/jwt-servers.js';
import { type FakeWorker, fakeFork } from './fake-worker.js';

const handles: ClusterHandle[] = [];
/** Two key sets made once (an RSA key takes a while): the loader hands them out in turn. */
let keySets: KeySet[] = [];
let loads = 0;
const loadKeys = async (): Promise<KeySet> => keySets[loads++ % 2]!;

beforeAll(async () => {
  keySets = [await generateEphemeralKeys(silentLogger), await generateEphemeralKeys(silentLogger)];
});

afterEach(async () => {
  for (const handle of handles.splice(0)) {
    void handle.close();
  }
});

/** A primary of `workers` fake workers, each answering hello and listening as a real one does. */
async function startPrimary(workers = 2, spareWorker = false) {
  const logger = recordingLogger();
  const options = resolveClusterOptions({ workers, address: '127.0.0.1:0', handleSignals: false, logger, keys: loadKeys, spareWorker });
  const { fork, forked } = fakeFork();
  const started = runPrimary(options, fork);
  const listen = (worker: FakeWorker): void => {
    worker.say({ type: 'jwt-grpc:hello' });
    worker.say({ type: 'jwt-grpc:listening' });
  };
  await vi.waitFor(() => expect(forked).toHaveLength(workers));
  for (const { worker } of forked.slice(0, workers)) listen(worker);
  const handle = await started;
  handles.push(handle);
  return { handle, forked, logger, listen };
}

function acknowledgeKeys(worker: FakeWorker): void {
  for (const message of worker.sentOf('jwt-grpc:keys')) worker.say({ type: 'jwt-grpc:keys-applied', generation: message.generation });
}

describe('runPrimary, composed over fake workers', () => {
  it('answers each hello with the keys, and is ready on the port it bound once every worker listens', async () => {
    const { handle, forked } = await startPrimary(2);
    expect(handle).toMatchObject({ role: 'primary', httpPort: undefined, metricsPort: undefined });
    // The handle's port is the one the primary holds (port 0 asked): it accepts.
    await new Promise<void>((resolve, reject) => {
      const socket = connect(handle.port, '127.0.0.1', () => resolve(void socket.destroy()));
      socket.once('error', reject);
    });
    expect(handle.servingPids()).toEqual(forked.map((f) => f.worker.process.pid));
    for (const { worker } of forked) expect(worker.sentOf('jwt-grpc:start')).toHaveLength(1);
  });

  it('distributes a reload to every live worker, a replaced one included, and not to the dead one', async () => {
    const { handle, forked, listen } = await startPrimary(2);
    const [victim, survivor] = [forked[0]!.worker, forked[1]!.worker];
    victim.exit(null, 'SIGKILL');
    await vi.waitFor(() => expect(forked).toHaveLength(3));
    const replacement = forked[2]!.worker;
    expect(forked[2]!.index).toBe(0);
    listen(replacement);
    const reload = handle.reloadKeys();
    await vi.waitFor(() => expect(survivor.sentOf('jwt-grpc:keys')).toHaveLength(1));
    expect(replacement.sentOf('jwt-grpc:keys')).toHaveLength(1);
    expect(victim.sentOf('jwt-grpc:keys')).toHaveLength(0);
    acknowledgeKeys(survivor);
    acknowledgeKeys(replacement);
    const keys = await reload;
    expect(handle.keys).toBe(keys);
    expect(handle.servingPids()).toEqual([replacement.process.pid, survivor.process.pid]);
  });

  it('with a spare: it gets the keys and every reload but serves nothing until a worker dies, then takes its slot', async () => {
    const { handle, forked } = await startPrimary(2, true);
    // The spare is forked SPARE_FORK_DELAY_MS after every worker listens.
    await vi.waitFor(() => expect(forked).toHaveLength(3), { timeout: 3000 });
    const spare = forked[2]!;
    expect(spare).toMatchObject({ index: 2, spare: true });
    spare.worker.say({ type: 'jwt-grpc:hello' });
    spare.worker.say({ type: 'jwt-grpc:spare-ready' });
    expect(spare.worker.sentOf('jwt-grpc:start')).toHaveLength(1);
    expect(handle.servingPids()).toEqual([forked[0]!.worker.process.pid, forked[1]!.worker.process.pid]);
    const reload = handle.reloadKeys();
    await vi.waitFor(() => expect(spare.worker.sentOf('jwt-grpc:keys')).toHaveLength(1));
    for (const { worker } of forked) acknowledgeKeys(worker);
    await reload;
    forked[0]!.worker.exit(null, 'SIGKILL');
    await vi.waitFor(() => expect(spare.worker.sentOf('jwt-grpc:take-slot')).toHaveLength(1));
    expect(forked).toHaveLength(3);
    expect(handle.servingPids()).toEqual([spare.worker.process.pid, forked[1]!.worker.process.pid]);
    spare.worker.say({ type: 'jwt-grpc:listening' });
    await vi.waitFor(() => expect(forked).toHaveLength(4), { timeout: 3000 });
    expect(forked[3]).toMatchObject({ index: 2, spare: true });
  });

  it('refuses a message of an unknown type from a worker: logged with its pid, nothing changes, the next message is served', async () => {
    const { handle, forked, logger } = await startPrimary(1);
    const worker = forked[0]!.worker;
    const sentBefore = worker.sent.length;
    worker.say({ type: 'jwt-grpc:self-destruct' });
    worker.say({ type: 'jwt-grpc:start', jwks: { keys: [] }, revocations: [] });
    expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([
      {
        level: 'warn',
        message: 'refused an IPC message of unknown type "jwt-grpc:self-destruct"',
        fields: { workerPid: worker.process.pid },
      },
      { level: 'warn', message: 'refused an IPC message of unknown type "jwt-grpc:start"', fields: { workerPid: worker.process.pid } },
    ]);
    expect(worker.sent.length).toBe(sentBefore);
    expect(handle.servingPids()).toEqual([worker.process.pid]);
    worker.say({ type: 'jwt-grpc:hello' });
    expect(worker.sentOf('jwt-grpc:start')).toHaveLength(2);
  });

  it('drains every worker on close and is done with 0 once they exited', async () => {
    const { handle, forked } = await startPrimary(2);
    const closed = handle.close();
    for (const { worker } of forked) {
      expect(worker.sentOf('jwt-grpc:shutdown')).toEqual([{ type: 'jwt-grpc:shutdown', graceMs: 10_000 }]);
      worker.exit(0);
    }
    await closed;
    expect(await handle.done).toBe(0);
  });

  it('fails the start when a worker cannot bind the address (ERR_LISTEN)', async () => {
    const logger = recordingLogger();
    const options = resolveClusterOptions({ workers: 2, address: '127.0.0.1:0', handleSignals: false, logger, keys: loadKeys });
    const { fork, forked } = fakeFork();
    const started = runPrimary(options, fork);
    await vi.waitFor(() => expect(forked).toHaveLength(2));
    forked[0]!.worker.say({ type: 'jwt-grpc:cannot-listen', message: 'address in use' });
    await expect(started).rejects.toMatchObject({ code: 'ERR_LISTEN', field: 'address', message: 'address in use' });
    for (const { worker } of forked) expect(worker.signals).toEqual(['SIGKILL']);
  });
});
