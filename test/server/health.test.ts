/**
 * grpc.health.v1.Health's status store and handlers, called directly: Check and List with
 * their refusals, Watch sending the current status and then only changes, ending on cancel or
 * close and leaving no watcher behind, and statuses that are not ServingStatus refused.
 * test/reflection/health.test.ts runs the same service over real connections.
 */
import { describe, expect, it } from 'vitest';
import { thrownBy } from '../../bench/kit/thrown.js';
import { HEALTH_LIST_LIMIT, HEALTH_SERVICE_NAME, type HealthService, createHealthService } from '../../src/server/health.js';
import { type CallContext, GrpcStatus, GrpcStatusError } from '../../src/transport/handler-api.js';

type Handler = (...args: unknown[]) => unknown;
const handler = (health: HealthService, name: string): Handler => health.implementation[name] as Handler;

/** A Watch call: what it wrote, its cancel, and its end. */
function watch(health: HealthService, service: string): { written: string[]; cancel(): void; ended: Promise<unknown> } {
  const written: string[] = [];
  const controller = new AbortController();
  const responses = { write: async (message: { status: string }) => void written.push(message.status) };
  const ended = Promise.resolve(handler(health, 'Watch')({ service }, responses, { signal: controller.signal } as CallContext));
  return { written, cancel: () => controller.abort(), ended };
}

const turns = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe('createHealthService', () => {
  it('is the grpc.health.v1.Health service with Check, List and Watch', () => {
    const health = createHealthService();
    expect(health.name).toBe(HEALTH_SERVICE_NAME);
    expect(Object.keys(health.implementation).sort()).toEqual(['Check', 'List', 'Watch']);
  });

  it('answers Check with the status of a known service, and NOT_FOUND naming an unknown one', () => {
    const health = createHealthService({ '': 'SERVING', 'pkg.Svc': 'NOT_SERVING' });
    expect(handler(health, 'Check')({ service: '' })).toEqual({ status: 'SERVING' });
    expect(handler(health, 'Check')({ service: 'pkg.Svc' })).toEqual({ status: 'NOT_SERVING' });
    const err = thrownBy(GrpcStatusError, () => handler(health, 'Check')({ service: 'pkg.Other' }));
    expect([err.status, err.message]).toEqual([GrpcStatus.NOT_FOUND, 'unknown service "pkg.Other"']);
  });

  it('answers List with every status, and RESOURCE_EXHAUSTED past the limit', () => {
    const health = createHealthService({ a: 'SERVING' });
    health.setStatus('b', 'UNKNOWN');
    expect(handler(health, 'List')({})).toEqual({ statuses: { a: { status: 'SERVING' }, b: { status: 'UNKNOWN' } } });
    for (let i = 0; i < HEALTH_LIST_LIMIT - 2; i++) health.setStatus(`s${i}`, 'SERVING');
    expect(Object.keys((handler(health, 'List')({}) as { statuses: object }).statuses)).toHaveLength(HEALTH_LIST_LIMIT);
    health.setStatus('one-more', 'SERVING');
    const err = thrownBy(GrpcStatusError, () => handler(health, 'List')({}));
    expect([err.status, err.message]).toEqual([
      GrpcStatus.RESOURCE_EXHAUSTED,
      `${HEALTH_LIST_LIMIT + 1} services, more than List answers (${HEALTH_LIST_LIMIT})`,
    ]);
  });

  it('refuses a status that is not a ServingStatus, naming where it was given', () => {
    const health = createHealthService();
    expect(() => health.setStatus('a', 'UP' as never)).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        field: 'status',
        message: 'option status: must be one of UNKNOWN, SERVING, NOT_SERVING, got "UP"',
      }),
    );
    expect(() => health.setStatus(5 as never, 'SERVING')).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', message: 'setStatus: service must be a string' }),
    );
    expect(() => createHealthService({ x: 'SERVICE_UNKNOWN' as never })).toThrow(expect.objectContaining({ field: 'statuses["x"]' }));
    expect(health.getStatus('a')).toBeUndefined();
  });
});

describe('Watch', () => {
  it('sends the current status at once, then each change, never the same twice', async () => {
    const health = createHealthService({ a: 'SERVING' });
    const call = watch(health, 'a');
    await turns();
    health.setStatus('a', 'SERVING');
    await turns();
    health.setStatus('a', 'NOT_SERVING');
    await turns();
    expect(call.written).toEqual(['SERVING', 'NOT_SERVING']);
    expect(health.watchCount).toBe(1);
    call.cancel();
    await call.ended;
    expect(health.watchCount).toBe(0);
  });

  it('sends SERVICE_UNKNOWN for an unknown service and keeps watching it', async () => {
    const health = createHealthService();
    const call = watch(health, 'later');
    await turns();
    health.setStatus('later', 'SERVING');
    await turns();
    expect(call.written).toEqual(['SERVICE_UNKNOWN', 'SERVING']);
    call.cancel();
    await call.ended;
  });

  it('ends every watch when the service closes, after the last change', async () => {
    const health = createHealthService({ a: 'SERVING' });
    const calls = [watch(health, 'a'), watch(health, 'b')];
    await turns();
    health.setStatus('a', 'NOT_SERVING');
    health.close();
    await Promise.all(calls.map((call) => call.ended));
    expect(calls.map((call) => call.written)).toEqual([['SERVING', 'NOT_SERVING'], ['SERVICE_UNKNOWN']]);
    expect(health.watchCount).toBe(0);
  });

  it('ends a cancelled watch even while a write waits on the client', async () => {
    const health = createHealthService({ a: 'SERVING' });
    const controller = new AbortController();
    const stuck = { write: () => new Promise<void>(() => {}) };
    const ended = Promise.resolve(handler(health, 'Watch')({ service: 'a' }, stuck, { signal: controller.signal } as CallContext));
    await turns();
    controller.abort();
    await ended;
    expect(health.watchCount).toBe(0);
  });
});
