/**
 * grpc.health.v1.Health over a real connection, on each transport: Check, List and Watch
 * as the health checking protocol describes them, and the status store behind them (its
 * refusals, and a Watch that ends on cancel while its client reads nothing).
 */
import { Client, credentials } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import type { CallContext } from '../../src/contracts/handler-api.js';
import { SERVICE_NAME } from '../../src/lib/index.js';
import { HEALTH_LIST_LIMIT, type ServingStatus, createHealthService } from '../../src/server/health.js';
import { callError, statusName } from '../../bench/kit/grpc-clients.js';
import { TRANSPORTS } from '../../bench/kit/jwt-servers.js';
import { healthClient, messages } from './clients.js';
import { closeTestServers, startTestServer } from './server.js';
import { waitUntil } from '../../bench/kit/wait.js';

const clients: { close(): void }[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await closeTestServers();
});

describe.each(TRANSPORTS)('on transport %s', (transport) => {
  async function connect(options?: { health?: boolean }) {
    const server = await startTestServer({ transport, ...options });
    const client = healthClient(server.address);
    clients.push(client);
    return { server, client };
  }

  describe('Check', () => {
    it('answers SERVING for the server and JwtService once listening, NOT_FOUND for an unknown service', async () => {
      const { client } = await connect();
      expect(await client.check('')).toEqual({ status: 'SERVING' });
      expect(await client.check(SERVICE_NAME)).toEqual({ status: 'SERVING' });
      const err = await callError(client.check('no.such.Service'));
      expect(statusName(err.code)).toBe('NOT_FOUND');
      expect(err.details).toContain('no.such.Service');
    });

    it('answers INVALID_ARGUMENT for a request that is not protobuf, and keeps serving', async () => {
      const { server, client } = await connect();
      const raw = new Client(server.address, credentials.createInsecure());
      clients.push(raw);
      const identity = (bytes: Buffer): Buffer => bytes;
      // The tag of field 1 (service, length-delimited), then nothing: no length.
      const err = await callError(
        new Promise((resolve, reject) =>
          raw.makeUnaryRequest('/grpc.health.v1.Health/Check', identity, identity, Buffer.from([0x0a]), (e, value) =>
            e ? reject(e) : resolve(value),
          ),
        ),
      );
      expect(statusName(err.code)).toBe('INVALID_ARGUMENT');
      expect(err.details).toContain('grpc.health.v1.Health/Check');
      expect(await client.check('')).toEqual({ status: 'SERVING' });
    });

    it('is UNIMPLEMENTED when health is not served', async () => {
      const { client } = await connect({ health: false });
      expect(statusName((await callError(client.check(''))).code)).toBe('UNIMPLEMENTED');
    });
  });

  describe('List', () => {
    it('answers every service with its status', async () => {
      const { server, client } = await connect();
      server.health.setStatus('extra.Service', 'NOT_SERVING');
      expect(await client.list()).toEqual({
        statuses: { '': { status: 'SERVING' }, [SERVICE_NAME]: { status: 'SERVING' }, 'extra.Service': { status: 'NOT_SERVING' } },
      });
    });

    it(`answers RESOURCE_EXHAUSTED beyond ${HEALTH_LIST_LIMIT} services`, async () => {
      const { server, client } = await connect();
      // '' and JwtService are two already.
      for (let i = 0; i < HEALTH_LIST_LIMIT - 2; i++) server.health.setStatus(`svc.S${i}`, 'SERVING');
      expect(Object.keys((await client.list()).statuses)).toHaveLength(HEALTH_LIST_LIMIT);
      server.health.setStatus('one.TooMany', 'SERVING');
      const err = await callError(client.list());
      expect([statusName(err.code), err.details]).toEqual([
        'RESOURCE_EXHAUSTED',
        `${HEALTH_LIST_LIMIT + 1} services, more than List answers (${HEALTH_LIST_LIMIT})`,
      ]);
    });
  });

  describe('Watch', () => {
    it('sends the current status at once, then every change', async () => {
      const { server, client } = await connect();
      const watch = messages(client.watch(SERVICE_NAME));
      expect(await watch.next()).toEqual({ status: 'SERVING' });
      server.health.setStatus(SERVICE_NAME, 'NOT_SERVING');
      expect(await watch.next()).toEqual({ status: 'NOT_SERVING' });
      server.health.setStatus(SERVICE_NAME, 'SERVING');
      expect(await watch.next()).toEqual({ status: 'SERVING' });
      expect(server.health.watchCount).toBe(1);
    });

    it('answers SERVICE_UNKNOWN for an unknown service and keeps watching it', async () => {
      const { server, client } = await connect();
      const watch = messages(client.watch('later.Service'));
      expect(await watch.next()).toEqual({ status: 'SERVICE_UNKNOWN' });
      server.health.setStatus('later.Service', 'SERVING');
      expect(await watch.next()).toEqual({ status: 'SERVING' });
    });

    it('does not resend a status that did not change', async () => {
      const { server, client } = await connect();
      const watch = messages(client.watch(''));
      expect(await watch.next()).toEqual({ status: 'SERVING' });
      server.health.setStatus('', 'SERVING');
      server.health.setStatus('', 'NOT_SERVING');
      expect(await watch.next()).toEqual({ status: 'NOT_SERVING' });
    });

    it('leaves no listener behind when the client cancels', async () => {
      const { server, client } = await connect();
      const calls = [client.watch(''), client.watch(SERVICE_NAME), client.watch('unknown.Service')];
      const watches = calls.map((call) => messages(call));
      for (const watch of watches) await watch.next();
      expect(server.health.watchCount).toBe(3);
      for (const call of calls) call.cancel();
      expect(await waitUntil(() => server.health.watchCount === 0, 5000, 10), 'every Watch stream ended').toBe(true);
      // Changes after the cancel reach nobody and break nothing.
      server.health.setStatus('', 'NOT_SERVING');
      expect(await client.check('')).toEqual({ status: 'NOT_SERVING' });
    });

    it('sends NOT_SERVING and ends with OK when the server closes', async () => {
      const { server, client } = await connect();
      const watch = messages(client.watch(''));
      expect(await watch.next()).toEqual({ status: 'SERVING' });
      const t0 = Date.now();
      const closed = server.close(10_000);
      expect(await watch.next()).toEqual({ status: 'NOT_SERVING' });
      expect(statusName((await watch.ended).code)).toBe('OK');
      await closed;
      // Ended by close, not by the 10 s grace running out.
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(server.health.watchCount).toBe(0);
    });
  });
});

describe('the status store', () => {
  it('refuses a status that is not a ServingStatus, naming where it was given', () => {
    const health = createHealthService();
    expect(() => health.setStatus('a', 'UP' as ServingStatus)).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: 'status',
        message: 'option status: must be one of UNKNOWN, SERVING, NOT_SERVING, got "UP"',
      }),
    );
    expect(() => health.setStatus('', 'SERVICE_UNKNOWN' as ServingStatus)).toThrow(expect.objectContaining({ field: 'status' }));
    expect(() => health.setStatus(5 as never, 'SERVING')).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', message: 'setStatus: service must be a string' }),
    );
    expect(() => createHealthService({ '': 'serving' as ServingStatus })).toThrow(expect.objectContaining({ field: 'statuses[""]' }));
    expect(health.getStatus('a')).toBeUndefined();
  });

  it('ends a cancelled Watch even while its write waits on a client that reads nothing', async () => {
    const health = createHealthService({ a: 'SERVING' });
    const controller = new AbortController();
    const stuck = { write: () => new Promise<void>(() => {}) };
    const watch = health.implementation['Watch'] as (...args: unknown[]) => unknown;
    const ended = Promise.resolve(watch({ service: 'a' }, stuck, { signal: controller.signal } as CallContext));
    expect(await waitUntil(() => health.watchCount === 1, 1000, 1)).toBe(true);
    controller.abort();
    await ended;
    expect(health.watchCount).toBe(0);
  });
});
