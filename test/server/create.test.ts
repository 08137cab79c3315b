/**
 * createJwtServer releases everything it opened on every path where creating or starting
 * it fails, and at close: its own tracing pipeline (shut down), the revocation store
 * (closed), the gRPC, metrics and discovery ports (free to bind again), and no handle left
 * keeping the event loop alive. One test per failure path, on each transport.
 */
import { readdirSync } from 'node:fs';
import { type Server as NetServer, createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { logVerbosity, setLogVerbosity } from '@grpc/grpc-js';
import { metrics } from '@opentelemetry/api';
import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type JwtServerOptions,
  type KeySet,
  type Transport,
  JwtGrpcError,
  createJwtServer,
  createVerifier,
  jwtAuthInterceptor,
  silentLogger,
} from '../../src/lib/index.js';
import { DROPPED_SPANS_METRIC } from '../../src/tracing/sdk.js';
import { waitUntil } from '../../bench/kit/wait.js';
import { TRANSPORTS, sharedKeys } from '../../bench/kit/jwt-servers.js';

/** A reader collected on demand: how the test sees whether a server's own tracing pipeline still reports. */
class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/**
 * Each test's own global MeterProvider: a pipeline takes its meter when it is made, so a
 * test sees its own server's pipeline only, not one an earlier test left behind. Delta:
 * a callback that is gone reports nothing (cumulative would repeat its last value).
 */
let reader: TestReader;
let meterProvider: MeterProvider | undefined;

function freshMeterProvider(): void {
  metrics.disable();
  reader = new TestReader({ aggregationTemporalitySelector: () => AggregationTemporality.DELTA });
  meterProvider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(meterProvider);
}

/** Whether the tracing pipeline of a server made in this test still counts its dropped spans (its callback goes at shutdown). */
async function pipelineOpen(): Promise<boolean> {
  const { resourceMetrics } = await reader.collect();
  const reported = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
  return reported.some((metric) => metric.descriptor.name === DROPPED_SPANS_METRIC && metric.dataPoints.length > 0);
}

type RevocationStore = Exclude<NonNullable<JwtServerOptions['revocationStore']>, string>;

/** A revocation store of the caller's own that records whether it was started and closed. */
interface WatchedStore extends RevocationStore {
  readonly started: boolean;
  readonly closed: boolean;
}

function watchedStore(behaviour: { start?: () => Promise<void>; reserve?: (count: number) => Promise<number> } = {}): WatchedStore {
  let started = false;
  let closed = false;
  let next = 0;
  return {
    kind: 'test',
    up: true,
    get started() {
      return started;
    },
    get closed() {
      return closed;
    },
    async start() {
      started = true;
      await behaviour.start?.();
    },
    add: async () => undefined,
    reserveStatusIndexes: behaviour.reserve ?? (async (count) => (next += count) - count),
    async close() {
      closed = true;
    },
  };
}

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = await occupy(0);
  const port = (server.address() as { port: number }).port;
  await release(server);
  return port;
}

function occupy(port: number): Promise<NetServer> {
  const server = createNetServer();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

function release(server: NetServer): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Whether `port` can be bound on 127.0.0.1 now (nothing of the failed server holds it). */
async function canBind(port: number): Promise<boolean> {
  try {
    await release(await occupy(port));
    return true;
  } catch {
    return false;
  }
}

/** The handles keeping the event loop alive (sockets, ref'd timers, watchers, children), by kind. */
function activeHandles(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** The process's open file descriptors (Linux); undefined elsewhere. */
function openFds(): number | undefined {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return undefined;
  }
}

/** What is open before a server is made, to compare with once it has failed or closed. */
interface Baseline {
  readonly handles: Map<string, number>;
  readonly fds: number | undefined;
}

const baseline = (): Baseline => ({ handles: activeHandles(), fds: openFds() });

/** Handle kinds of which more are open now than at `before`. */
function handlesAbove(before: Baseline): string[] {
  const was = (kind: string): number => before.handles.get(kind) ?? 0;
  return [...activeHandles()].filter(([kind, count]) => count > was(kind)).map(([kind, count]) => `${kind} ${was(kind)} -> ${count}`);
}

/** Everything the server opened is released: the pipeline shut down, the store closed, the ports free, no handle or descriptor left. */
async function expectReleased(before: Baseline, { store, ports = [] }: { store?: WatchedStore; ports?: number[] }): Promise<void> {
  expect(await pipelineOpen(), 'its own tracing pipeline is shut down').toBe(false);
  if (store?.started) expect(store.closed, 'the revocation store is closed').toBe(true);
  for (const port of ports) expect(await canBind(port), `port ${port} is free to bind again`).toBe(true);
  const settled = await waitUntil(() => handlesAbove(before).length === 0, 2000, 20);
  expect(settled ? [] : handlesAbove(before), 'no handle keeps the event loop alive').toEqual([]);
  if (before.fds !== undefined) {
    const fdsBack = await waitUntil(() => (openFds() ?? 0) <= (before.fds ?? 0), 2000, 20);
    expect(fdsBack ? before.fds : openFds(), 'no file descriptor stays open').toBe(before.fds);
  }
}

/** Resolves to the error `listen` (or anything else) rejects with. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
}

let keys: KeySet;

beforeAll(async () => {
  keys = await sharedKeys();
  // The OTLP exporter is never reached: no call is made, so no span is exported.
  vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', 'http://127.0.0.1:9');
  // Loads what a first server loads lazily (protos, transports, the SDK), so that the baselines see only the servers' own handles.
  for (const transport of TRANSPORTS) {
    const warm = createJwtServer({
      transport,
      keys,
      tracing: true,
      logger: silentLogger,
      metricsPort: 0,
      httpPort: 0,
      issuer: 'https://issuer.example',
    });
    await warm.listen('127.0.0.1:0');
    await warm.close();
  }
});

beforeEach(freshMeterProvider);

afterEach(async () => {
  setLogVerbosity(logVerbosity.ERROR);
  await meterProvider?.shutdown();
});

afterAll(() => {
  vi.unstubAllEnvs();
  metrics.disable();
});

describe.each(TRANSPORTS)('on transport %s', (transport: Transport) => {
  /** A server with every part that opens something: its own tracing pipeline, a revocation store, and the options given. */
  function serverWith(store: WatchedStore, options: JwtServerOptions = {}) {
    return createJwtServer({ transport, keys, logger: silentLogger, tracing: true, revocationStore: store, ...options });
  }

  describe('listen fails, and everything opened is released', () => {
    it('an admin token file that cannot be read (before the store opens)', async () => {
      const before = baseline();
      const store = watchedStore();
      const port = await freePort();
      const err = await rejection(serverWith(store, { adminTokenFile: join('/nonexistent', 'admin-token') }).listen(`127.0.0.1:${port}`));
      expect(err).toMatchObject({ code: 'ERR_FILE', field: 'adminTokenFile' });
      expect(store.started).toBe(false);
      await expectReleased(before, { store, ports: [port] });
    });

    it('a revocation store that cannot start', async () => {
      const before = baseline();
      const store = watchedStore({
        start: () => Promise.reject(new JwtGrpcError('ERR_REVOCATION_STORE_UNAVAILABLE', 'the test store is down')),
      });
      const port = await freePort();
      const err = await rejection(serverWith(store).listen(`127.0.0.1:${port}`));
      expect(err).toMatchObject({ code: 'ERR_REVOCATION_STORE_UNAVAILABLE' });
      expect(store.closed).toBe(true);
      await expectReleased(before, { store, ports: [port] });
    });

    it('a status list whose first block of indexes cannot be reserved', async () => {
      const before = baseline();
      const store = watchedStore({
        reserve: () => Promise.reject(new JwtGrpcError('ERR_REVOCATION_STORE_UNAVAILABLE', 'no index counter')),
      });
      const [port, httpPort] = [await freePort(), await freePort()];
      const server = serverWith(store, { statusList: true, httpPort, issuer: 'https://issuer.example' });
      const err = await rejection(server.listen(`127.0.0.1:${port}`));
      expect(err).toMatchObject({ code: 'ERR_REVOCATION_STORE_UNAVAILABLE' });
      expect(store.closed).toBe(true);
      await expectReleased(before, { store, ports: [port, httpPort] });
    });

    it('an interceptor rule that names no served method', async () => {
      const before = baseline();
      const store = watchedStore();
      const port = await freePort();
      const auth = jwtAuthInterceptor(createVerifier(keys, { audience: 'test' }), { publicMethods: ['/no.Such/Method'] });
      const err = await rejection(serverWith(store, { interceptors: [auth] }).listen(`127.0.0.1:${port}`));
      expect(err).toMatchObject({ code: 'ERR_INVALID_OPTION', field: 'publicMethods' });
      expect(store.closed).toBe(true);
      await expectReleased(before, { store, ports: [port] });
    });

    it('a gRPC port in use', async () => {
      setLogVerbosity(logVerbosity.NONE); // on transport grpc-js, its Server logs the failed bind itself
      const blocker = await occupy(0);
      const port = (blocker.address() as { port: number }).port;
      try {
        const before = baseline();
        const store = watchedStore();
        const err = await rejection(serverWith(store).listen(`127.0.0.1:${port}`));
        expect(err).toMatchObject({ code: 'ERR_LISTEN' });
        expect(store.closed).toBe(true);
        await expectReleased(before, { store });
      } finally {
        await release(blocker);
      }
      expect(await canBind(port)).toBe(true);
    });

    it('TLS material that is not PEM', async () => {
      setLogVerbosity(logVerbosity.NONE);
      const before = baseline();
      const store = watchedStore();
      const port = await freePort();
      const err = await rejection(serverWith(store).listen(`127.0.0.1:${port}`, { key: 'not a key', cert: 'not a certificate' }));
      expect(err).toBeInstanceOf(JwtGrpcError);
      expect(err).toMatchObject({ code: 'ERR_LISTEN' });
      expect((err as Error).message).toMatch(/PEM/);
      expect(store.closed).toBe(true);
      await expectReleased(before, { store, ports: [port] });
    });

    it('a metrics port in use, after the gRPC port is bound', async () => {
      const blocker = await occupy(0);
      const metricsPort = (blocker.address() as { port: number }).port;
      try {
        const before = baseline();
        const store = watchedStore();
        const port = await freePort();
        const err = await rejection(serverWith(store, { metricsPort }).listen(`127.0.0.1:${port}`));
        expect(err).toMatchObject({ code: 'ERR_LISTEN', field: 'metricsPort' });
        expect(store.closed).toBe(true);
        await expectReleased(before, { store, ports: [port] });
      } finally {
        await release(blocker);
      }
    });

    it('a discovery port in use, after the gRPC and metrics ports are bound', async () => {
      const blocker = await occupy(0);
      const httpPort = (blocker.address() as { port: number }).port;
      try {
        const before = baseline();
        const store = watchedStore();
        const [port, metricsPort] = [await freePort(), await freePort()];
        const server = serverWith(store, { metricsPort, httpPort, issuer: 'https://issuer.example' });
        const err = await rejection(server.listen(`127.0.0.1:${port}`));
        expect(err).toMatchObject({ code: 'ERR_LISTEN', field: 'httpPort' });
        expect(store.closed).toBe(true);
        await expectReleased(before, { store, ports: [port, metricsPort] });
      } finally {
        await release(blocker);
      }
    });

    it('close while listen is under way: listen stops, and what it had opened is released', async () => {
      const before = baseline();
      let loaded!: () => void;
      const loading = new Promise<void>((resolve) => (loaded = resolve));
      let starting!: () => void;
      const started = new Promise<void>((resolve) => (starting = resolve));
      const store = watchedStore({
        start: () => {
          starting();
          return loading;
        },
      });
      const port = await freePort();
      const server = serverWith(store);
      const listening = rejection(server.listen(`127.0.0.1:${port}`));
      await started;
      let closeResolved = false;
      const closed = server.close().then(() => (closeResolved = true));
      // close resolves once everything is released, so not while listen may still open something.
      await sleep(100);
      expect(closeResolved, 'close waits for the listen under way').toBe(false);
      loaded();
      const err = await listening;
      expect(err).toMatchObject({ code: 'ERR_SERVER_STATE' });
      expect((err as Error).message).toMatch(/closed while starting/);
      await closed;
      expect(store.closed).toBe(true);
      await expectReleased(before, { store, ports: [port] });
    });
  });

  it('creation fails after its tracing pipeline started: the pipeline is shut down', async () => {
    const registry = new Registry();
    // The name the server's own pipeline registers its dropped spans under: taken, so creating fails after the pipeline exists.
    registry.registerMetric({
      name: 'jwt_grpc_tracing_spans_dropped_total',
      help: 'taken',
      type: 'counter',
      get: async () => ({}),
    } as never);
    const before = baseline();
    const create = (): unknown => createJwtServer({ transport, keys, logger: silentLogger, tracing: true, metricsRegistry: registry });
    expect(create).toThrow(/jwt_grpc_tracing_spans_dropped_total/);
    expect(await waitUntil(async () => !(await pipelineOpen()), 2000, 20), 'its own tracing pipeline is shut down').toBe(true);
    await expectReleased(before, {});
  });

  it('close releases everything a started server opened', async () => {
    const before = baseline();
    const store = watchedStore();
    const [port, metricsPort, httpPort] = [await freePort(), await freePort(), await freePort()];
    const server = serverWith(store, { metricsPort, httpPort, issuer: 'https://issuer.example', statusList: true });
    expect(await server.listen(`127.0.0.1:${port}`)).toBe(port);
    expect(await pipelineOpen()).toBe(true);
    expect([server.metricsPort, server.httpPort]).toEqual([metricsPort, httpPort]);
    await server.close();
    expect(store.closed).toBe(true);
    await expectReleased(before, { store, ports: [port, metricsPort, httpPort] });
  });
});
