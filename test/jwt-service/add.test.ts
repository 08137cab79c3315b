/**
 * addJwtService on a grpc-js server the user owns: options are checked before anything is
 * added (an option of createJwtServer is refused with where it belongs), the service is added
 * once, and the handle swaps keys and policy for the calls after. Calls over a real connection:
 * test/client/issuer-and-service.test.ts and test/jwt-service/handlers.test.ts.
 */
import { Server } from '@grpc/grpc-js';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { addJwtService } from '../../src/jwt-service/add.js';
import { SERVICE_NAME } from '../../src/jwt-service/definition.js';
import { type KeySet, generateKeys } from '../../src/lib/index.js';

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
