/**
 * A spare worker's hold: the keys and the policy it will start serving with, each reload
 * imported and acknowledged at once (the primary's reload does not wait on it), a key set
 * that cannot be imported refused with the reason while the spare keeps what it had.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { WorkerMessage } from '../../src/cluster/messages.js';
import { SpareHold } from '../../src/cluster/spare.js';
import { generateEphemeralKeys } from '../../src/keys/ephemeral.js';
import { exportKeys } from '../../src/keys/export.js';
import type { KeySet } from '../../src/keys/key-set.js';
import { silentLogger } from '../../src/base/log.js';
import type { JwtPolicy } from '../../src/policy/document.js';

let first: KeySet;
let second: KeySet;

beforeAll(async () => {
  [first, second] = await Promise.all([generateEphemeralKeys(silentLogger), generateEphemeralKeys(silentLogger)]);
});

function hold() {
  const sent: WorkerMessage[] = [];
  return { sent, hold: new SpareHold({ keys: first, policy: undefined }, (message) => void sent.push(message)) };
}

const kids = (keys: KeySet): string[] => exportKeys(keys).keys.map((key) => key.kid as string);

describe('SpareHold', () => {
  it('takes reloaded keys: imported now, acknowledged with their generation, served from the start', () => {
    const { hold: spare, sent } = hold();
    spare.keys({ type: 'jwt-grpc:keys', generation: 3, jwks: exportKeys(second, { includePrivate: true }) });
    expect(sent).toEqual([{ type: 'jwt-grpc:keys-applied', generation: 3 }]);
    expect(kids(spare.state.keys)).toEqual(kids(second));
  });

  it('refuses a key set it cannot import, naming why, and keeps its keys', () => {
    const { hold: spare, sent } = hold();
    spare.keys({ type: 'jwt-grpc:keys', generation: 4, jwks: { keys: [{ kty: 'oct', kid: 'broken' }] } as never });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ type: 'jwt-grpc:keys-applied', generation: 4, error: expect.any(String) });
    expect(kids(spare.state.keys)).toEqual(kids(first));
  });

  it('takes a reloaded policy and acknowledges it', () => {
    const { hold: spare, sent } = hold();
    const policy = { callers: {} } as unknown as JwtPolicy;
    spare.policy({ type: 'jwt-grpc:policy', generation: 2, policy });
    expect(sent).toEqual([{ type: 'jwt-grpc:policy-applied', generation: 2 }]);
    expect(spare.state.policy).toBe(policy);
  });
});
