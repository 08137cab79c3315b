/**
 * Which revocation store the options open: the file store for revocations, Redis for a
 * revocationStore URL, a store object as given, none without either, and both refused.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JwtGrpcError } from '../../src/base/errors.js';
import { silentLogger } from '../../src/base/log.js';
import { checkStoreOptions, openRevocationStore } from '../../src/revocation/open.js';
import type { RevocationStore } from '../../src/contracts/revocation-store.js';

const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-open-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ownStore: RevocationStore = { kind: 'own', up: true, start: async () => {}, add: async () => {}, close: async () => {} };

describe('checkStoreOptions', () => {
  it('takes one store or none', () => {
    const label = (name: string): string => name;
    expect(() => checkStoreOptions({}, label)).not.toThrow();
    expect(() => checkStoreOptions({ revocations: 'r.jsonl' }, label)).not.toThrow();
    expect(() => checkStoreOptions({ revocationStore: ownStore }, label)).not.toThrow();
  });

  it('refuses both, naming them as the caller labels them', () => {
    let refused: unknown;
    try {
      checkStoreOptions(
        { revocations: 'r.jsonl', revocationStore: 'redis://localhost' },
        (name) => `--${name === 'revocations' ? 'revocations' : 'revocation-store'}`,
      );
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(JwtGrpcError);
    expect((refused as JwtGrpcError).code).toBe('ERR_INVALID_OPTION');
    expect((refused as JwtGrpcError).message).toBe('option --revocations/--revocation-store: give one store, not both');
  });
});

describe('openRevocationStore', () => {
  it('opens no store without either option', async () => {
    expect(await openRevocationStore({}, silentLogger)).toBeUndefined();
  });

  it('returns a store object as given', async () => {
    expect(await openRevocationStore({ revocationStore: ownStore }, silentLogger)).toBe(ownStore);
  });

  it('opens the file store for revocations', async () => {
    const store = await openRevocationStore({ revocations: join(dir, 'revocations.jsonl') }, silentLogger);
    expect(store?.kind).toBe('file');
    await store?.close();
  });

  it('opens the Redis store for a URL, connecting only when started', async () => {
    const store = await openRevocationStore({ revocationStore: 'redis://127.0.0.1:1/0' }, silentLogger);
    expect([store?.kind, store?.up]).toEqual(['redis', false]);
    await store?.close();
  });

  it('refuses a revocationStore string that is not a redis URL', async () => {
    await expect(openRevocationStore({ revocationStore: 'http://localhost' }, silentLogger)).rejects.toMatchObject({
      code: 'ERR_INVALID_OPTION',
      field: 'revocationStore',
    });
  });
});
