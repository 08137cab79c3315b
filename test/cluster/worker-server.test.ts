/**
 * A worker's server as the primary's messages reach it: reloads that arrive while it
 * binds wait, each swap is acknowledged with its generation or its failure.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { InProcessServer } from '../../src/cluster/in-process.js';
import type { WorkerMessage } from '../../src/cluster/messages.js';
import { WorkerServer } from '../../src/cluster/worker-server.js';
import { exportKeys } from '../../src/keys/export.js';
import { generateEphemeralKeys } from '../../src/keys/ephemeral.js';
import type { KeySet } from '../../src/keys/key-set.js';
import { silentLogger } from '../../src/base/log.js';
import type { JwtPolicy } from '../../src/policy/document.js';

const POLICY = { callers: {} } as unknown as JwtPolicy;
let keys: KeySet;

beforeAll(async () => {
  keys = await generateEphemeralKeys(silentLogger);
});

/** A server whose service records what it was given; `refuse` makes setKeys throw. */
function fakeServer(keys: KeySet, refuse?: string) {
  const calls: string[] = [];
  const service = {
    keys,
    policy: undefined as JwtPolicy | undefined,
    setKeys(next: KeySet) {
      if (refuse !== undefined) throw new Error(refuse);
      calls.push('setKeys');
      service.keys = next;
    },
    setPolicy(next: JwtPolicy) {
      calls.push('setPolicy');
      service.policy = next;
    },
  };
  const server = {
    server: { service },
    close: async (graceMs?: number) => void calls.push(`close ${graceMs}`),
  } as unknown as InProcessServer;
  return { server, calls, service };
}

function target() {
  const sent: WorkerMessage[] = [];
  return { sent, keys, target: new WorkerServer(silentLogger, (message) => sent.push(message)) };
}

describe('WorkerServer', () => {
  it('holds keys and a policy reloaded while the server binds, and swaps the latest in once it listens', async () => {
    const { sent, keys, target: t } = target();
    const jwks = exportKeys(keys, { includePrivate: true });
    t.keys({ type: 'jwt-grpc:keys', generation: 1, jwks });
    t.keys({ type: 'jwt-grpc:keys', generation: 2, jwks });
    t.policy({ type: 'jwt-grpc:policy', generation: 1, policy: POLICY });
    expect(sent).toEqual([]);
    const { server, calls, service } = fakeServer(keys);
    t.listening(server);
    expect(calls).toEqual(['setKeys', 'setPolicy']);
    expect(service.policy).toBe(POLICY);
    expect(sent).toEqual([
      { type: 'jwt-grpc:keys-applied', generation: 2 },
      { type: 'jwt-grpc:policy-applied', generation: 1 },
    ]);
  });

  it('swaps a reload in at once when listening, and acknowledges a failure with its reason', async () => {
    const { sent, keys, target: t } = target();
    const { server } = fakeServer(keys, 'the key set lacks ES256');
    t.listening(server);
    t.keys({ type: 'jwt-grpc:keys', generation: 3, jwks: exportKeys(keys, { includePrivate: true }) });
    expect(sent).toEqual([{ type: 'jwt-grpc:keys-applied', generation: 3, error: 'Error: the key set lacks ES256' }]);
  });

  it('drains on shutdown once listening; before, there is nothing to drain', async () => {
    const { keys, target: t } = target();
    const { server, calls } = fakeServer(keys);
    t.shutdown(100);
    t.listening(server);
    t.shutdown(250);
    expect(calls).toEqual(['close 250']);
  });
});
