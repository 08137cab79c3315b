/**
 * addJwtService on a grpc-js server the user owns: options are checked before anything is
 * added (an option of createJwtServer is refused with where it belongs), the service is added
 * once, and the handle swaps keys and policy for the calls after; with a revocation store,
 * it answers once the store has loaded (test/revocation/embedded-issuer.integration.test.ts
 * has it end to end, status list and remote verifier included). Calls over a real connection:
 * test/client/issuer-and-service.test.ts and test/jwt-service/handlers.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { addJwtService } from '../../src/jwt-service/add.js';
import { SERVICE_NAME } from '../../src/jwt-service/definition.js';
import { GrpcStatus, type KeySet, createJwtClient, generateKeys } from '../../src/lib/index.js';
import type { RevocationStore } from '../../src/contracts/revocation-store.js';

const quiet = { info() {}, warn() {}, error() {} };
let keys: KeySet;
let other: KeySet;
beforeAll(async () => {
  [keys, other] = await Promise.all([generateKeys({ algorithms: ['ES256'] }), generateKeys({ algorithms: ['ES256'] })]);
});

function spiedServer(): { server: Server; addService: ReturnType<typeof vi.spyOn> } {
  const server = new Server();
  return { server, addService: vi.spyOn(server, 'addService') };
}

describe('addJwtService', () => {
  it('adds JwtService once, with its six methods', () => {
    const { server, addService } = spiedServer();
    addJwtService(server, { keys, logger: quiet });
    expect(addService).toHaveBeenCalledTimes(1);
    const [definition] = addService.mock.calls[0] as [Record<string, { path: string }>];
    expect(Object.values(definition).map((m) => m.path)).toEqual(
      ['GenerateJwt', 'VerifyJwt', 'GetJwks', 'GetStatusList', 'RevokeJwt', 'ExchangeToken'].map((name) => `/${SERVICE_NAME}/${name}`),
    );
  });

  it('refuses an option of createJwtServer, saying where it belongs, and adds nothing', () => {
    const { server, addService } = spiedServer();
    expect(() => addJwtService(server, { keys, logger: quiet, maxConnections: 10 } as never)).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: 'maxConnections',
        message:
          'option maxConnections: is not an option of addJwtService; it is an option of createJwtServer: set it on your own grpc-js server instead',
      }),
    );
    expect(addService).not.toHaveBeenCalled();
  });

  it('refuses an unknown option and a missing key set, and adds nothing', () => {
    const { server, addService } = spiedServer();
    expect(() => addJwtService(server, { keys, logger: quiet, defaultTtl: 5 } as never)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION' }),
    );
    expect(() => addJwtService(server, { logger: quiet } as never)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'keys' }),
    );
    expect(() => addJwtService(server, { keys, maxTtlSeconds: 0 })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'maxTtlSeconds' }),
    );
    expect(addService).not.toHaveBeenCalled();
  });

  it('returns a handle whose keys are the served ones, swapped by setKeys and reloadKeys', async () => {
    const handle = addJwtService(new Server(), { keys, logger: quiet });
    expect(handle.keys).toBe(keys);
    expect(handle.policy).toBeUndefined();
    handle.setKeys(other);
    expect(handle.keys).toBe(other);
    await handle.reloadKeys(async () => keys);
    expect(handle.keys).toBe(keys);
  });
});

describe('addJwtService with a revocation store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-add-revocations-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses what createJwtServer refuses: two stores, a status list without an issuer or a store that keeps its counter', () => {
    const { server, addService } = spiedServer();
    const file = join(dir, 'refused.jsonl');
    expect(() => addJwtService(server, { keys, logger: quiet, revocations: file, revocationStore: 'redis://127.0.0.1:1' })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'revocations/revocationStore' }),
    );
    expect(() => addJwtService(server, { keys, logger: quiet, revocations: file, statusList: true })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'statusList', message: expect.stringMatching(/needs issuer/) }),
    );
    expect(() => addJwtService(server, { keys, logger: quiet, issuer: 'https://auth.example', statusList: true })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'statusList', message: expect.stringMatching(/needs revocations/) }),
    );
    expect(() => addJwtService(server, { keys, logger: quiet, revocations: file, statusListTtlSeconds: 0 })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'statusListTtlSeconds' }),
    );
    expect(addService).not.toHaveBeenCalled();
  });

  it('answers UNAVAILABLE until its revocations have loaded, then serves; ready and close settle', async () => {
    let loaded: () => void = () => {};
    const closed = vi.fn(async () => {});
    const store: RevocationStore = {
      kind: 'test',
      up: true,
      start: () => new Promise<void>((resolve) => (loaded = resolve)),
      add: async () => {},
      close: closed,
    };
    const server = new Server();
    const jwt = addJwtService(server, { keys, logger: quiet, revocationStore: store });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
    );
    const client = createJwtClient(`127.0.0.1:${port}`);
    try {
      await expect(client.getJwks()).rejects.toMatchObject({
        status: GrpcStatus.UNAVAILABLE,
        details: 'JwtService is loading its revocations',
      });
      expect(() => jwt.setKeys(other)).toThrow(expect.objectContaining({ code: 'ERR_SERVER_STATE' }));
      loaded();
      await jwt.ready;
      expect(JSON.parse((await client.getJwks()).jwks_json).keys).toHaveLength(1);
      await jwt.close();
      expect(closed).toHaveBeenCalledTimes(1);
    } finally {
      client.close();
      server.forceShutdown();
    }
  });

  it('rejects ready, and keeps answering UNAVAILABLE, when the store cannot be opened', async () => {
    const server = new Server();
    const jwt = addJwtService(server, { keys, logger: quiet, revocations: join(dir, 'no-such-dir', 'x.jsonl') });
    await expect(jwt.ready).rejects.toMatchObject({ name: 'JwtGrpcError' });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
    );
    const client = createJwtClient(`127.0.0.1:${port}`);
    try {
      await expect(client.verifyJwt({ jwt: 'x' })).rejects.toMatchObject({ status: GrpcStatus.UNAVAILABLE });
    } finally {
      client.close();
      server.forceShutdown();
    }
  });
});
