/**
 * Calls that end badly leave nothing behind, on each transport. In one process: a server
 * from createJwtServer (RS256, the slowest signer, so calls are still running when their
 * client gives up) and, for a bounded number of rounds, many clients that
 * - make calls with a 1 ms deadline,
 * - cancel calls in flight,
 * - close their grpc-js client with calls in flight (once connected: see `ready`),
 * - or drop the TCP connection under calls in flight (a raw HTTP/2 client whose socket
 *   is destroyed: what a crashed or unplugged client looks like to the server).
 * Afterwards the server holds no connection (ESTABLISHED or CLOSE_WAIT on its port, from
 * /proc/net/tcp{,6}), its memory is back near the baseline, and it still answers.
 *
 * And a client whose deadlines expire by the thousand (each one an RST_STREAM) keeps its
 * connection and its other calls: node:http2's Rapid Reset guard, left at its defaults,
 * killed such a connection and failed 1,000 healthy calls (see STREAM_RESET_BURST in
 * src/transport/http2/defaults.ts: the own transport's guard, and set on grpc-js's server
 * by src/server/channel-options.ts).
 */
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMiB } from '../../bench/common/format.js';
import { sleep, waitUntil } from '../../bench/kit/wait.js';
import { serverConnections } from '../../bench/kit/proc-net.js';
import { type JwtServer, createJwtServer, generateKeys, silentLogger } from '../../src/lib/index.js';
import { TRANSPORTS } from '../../bench/kit/jwt-servers.js';
import { exposeGc, generate, grpcJsJwtClient, openRawCall, ready } from './helpers.js';
import { encodeGenerateJwtRequest, grpcFrame } from '../../bench/kit/grpc-body.js';
import { rawSession } from '../transport/helpers/raw.js';

const ROUNDS = 8;
const CLIENTS_PER_KIND = 4;
const CALLS_PER_CLIENT = 25;
/** Heap growth accepted after all rounds, over the baseline taken after a first round. */
const HEAP_SLACK_BYTES = 8 * 1024 * 1024;

const REQUEST = { algorithm: 'RS256', subject: 'gone@example.com' };

describe.skipIf(process.platform !== 'linux').each(TRANSPORTS)(
  'transport %s: clients that vanish and deadlines that expire leave nothing behind',
  (transport) => {
    let server: JwtServer;
    let port: number;
    const gc = exposeGc();

    beforeAll(async () => {
      server = createJwtServer({
        transport,
        keys: await generateKeys({ algorithms: ['RS256', 'HS256'] }),
        logger: silentLogger,
        reflection: false,
        health: false,
      });
      port = await server.listen('127.0.0.1:0');
    });

    afterAll(async () => {
      await server?.close({ graceMs: 1000 });
    });

    /** How every call of a round ended, by gRPC status code (or 'raw' for the raw HTTP/2 streams). */
    type Outcomes = Map<string, number>;
    const count = (outcomes: Outcomes, key: string): void => void outcomes.set(key, (outcomes.get(key) ?? 0) + 1);

    async function deadlineClient(outcomes: Outcomes): Promise<void> {
      const client = grpcJsJwtClient(port);
      await ready(client);
      const calls = Array.from({ length: CALLS_PER_CLIENT }, () => generate(client, REQUEST, 1));
      for (const { error } of await Promise.all(calls)) count(outcomes, `deadline:${error?.code ?? 0}`);
      client.close();
    }

    async function cancellingClient(outcomes: Outcomes): Promise<void> {
      const client = grpcJsJwtClient(port);
      await ready(client);
      const results = Array.from({ length: CALLS_PER_CLIENT }, () => {
        let handle: { cancel(): void } | undefined;
        const result = new Promise<number>((resolve) => {
          handle = client.GenerateJwt(REQUEST, { deadline: Date.now() + 10_000 }, (error) => resolve(error?.code ?? 0));
        });
        return { handle, result };
      });
      await sleep(Math.random() * 5);
      for (const { handle } of results) handle?.cancel();
      for (const code of await Promise.all(results.map((r) => r.result))) count(outcomes, `cancel:${code}`);
      client.close();
    }

    async function closingClient(outcomes: Outcomes): Promise<void> {
      const client = grpcJsJwtClient(port);
      await ready(client);
      const calls = Array.from({ length: CALLS_PER_CLIENT }, () => generate(client, REQUEST, 10_000));
      await sleep(Math.random() * 5);
      client.close(); // calls in flight: grpc-js lets them end, but the client is gone for good
      for (const { error } of await Promise.all(calls)) count(outcomes, `close:${error?.code ?? 0}`);
    }

    /** Raw HTTP/2: send the calls, wait for the server to have them, then cut the TCP connection. */
    async function droppingClient(outcomes: Outcomes): Promise<void> {
      const session = await rawSession(port);
      const body = grpcFrame(encodeGenerateJwtRequest(REQUEST.algorithm, REQUEST.subject));
      for (let i = 0; i < CALLS_PER_CLIENT; i++) {
        const stream = openRawCall(session, 'GenerateJwt');
        stream.on('error', () => {});
        stream.end(body);
      }
      // A PING answered means the server has read every frame sent before it.
      await new Promise<void>((resolve) => session.ping(() => resolve()));
      session.socket.destroy();
      session.destroy();
      count(outcomes, 'dropped');
    }

    async function round(): Promise<Outcomes> {
      const outcomes: Outcomes = new Map();
      const clients: Promise<void>[] = [];
      for (let i = 0; i < CLIENTS_PER_KIND; i++) {
        clients.push(deadlineClient(outcomes), cancellingClient(outcomes), closingClient(outcomes), droppingClient(outcomes));
      }
      await Promise.all(clients);
      return outcomes;
    }

    async function settledHeap(): Promise<number> {
      // Finalizers of the first collection (native http2 objects) free more for the next ones.
      for (let i = 0; i < 4; i++) {
        gc();
        await sleep(20);
      }
      return process.memoryUsage().heapUsed;
    }

    const connectionsLeft = (): number => serverConnections(port).length;

    it(`${ROUNDS} rounds of 1 ms deadlines, cancels, closes and dropped connections: no connection left, heap near baseline`, async () => {
      // Round 1 is the warm-up: code paths compiled, pools and caches at their size.
      await round();
      expect(
        await waitUntil(() => connectionsLeft() === 0, 10_000),
        `connections left after warm-up: ${JSON.stringify(serverConnections(port))}`,
      ).toBe(true);
      const baseline = await settledHeap();

      const totals: Outcomes = new Map();
      for (let r = 0; r < ROUNDS; r++) {
        for (const [key, n] of await round()) totals.set(key, (totals.get(key) ?? 0) + n);
      }
      const drained = await waitUntil(() => connectionsLeft() === 0, 10_000);
      const left = serverConnections(port);
      const after = await settledHeap();
      console.log(
        `disconnect (${transport}): ${ROUNDS} rounds, outcomes ${JSON.stringify(Object.fromEntries([...totals].sort()))}; ` +
          `server connections left ${left.length}; heapUsed after GC ${formatMiB(baseline, 1)} MiB -> ${formatMiB(after, 1)} MiB`,
      );

      // Each kind of ending happened: 1 ms deadlines expired, cancels cancelled.
      expect(totals.get(`deadline:${status.DEADLINE_EXCEEDED}`) ?? 0).toBeGreaterThan(0);
      expect(totals.get(`cancel:${status.CANCELLED}`) ?? 0).toBeGreaterThan(0);
      expect(totals.get('dropped')).toBe(ROUNDS * CLIENTS_PER_KIND);

      expect(drained, `server-side connections still open: ${JSON.stringify(left)}`).toBe(true);
      expect(after).toBeLessThanOrEqual(baseline + HEAP_SLACK_BYTES);

      // And the server still serves.
      const client = grpcJsJwtClient(port);
      try {
        const { error, response } = await generate(client, REQUEST, 10_000);
        expect(error).toBeNull();
        expect(response?.jwt.split('.')).toHaveLength(3);
      } finally {
        client.close();
      }
    }, 120_000);

    it('one connection, 8,000 calls with a 1 ms deadline among 8,000 without: the connection survives and every call without a deadline is OK', async () => {
      const client = grpcJsJwtClient(port);
      await ready(client);
      const outcomes: Outcomes = new Map();
      try {
        for (let batch = 0; batch < 40; batch++) {
          const calls = Array.from({ length: 400 }, (_, i) => {
            const timed = i % 2 === 0;
            return generate(client, { algorithm: 'HS256', subject: 'storm@example.com' }, timed ? 1 : 30_000).then(({ error }) =>
              count(outcomes, `${timed ? 'deadline' : 'normal'}:${error === null ? 'OK' : `${error.code} ${error.details.split(',')[0]}`}`),
            );
          });
          await Promise.all(calls);
        }
      } finally {
        client.close();
      }
      const normal = [...outcomes].filter(([key]) => key.startsWith('normal:'));
      const expiredAll = [...outcomes]
        .filter(([key]) => key.startsWith(`deadline:${status.DEADLINE_EXCEEDED}`))
        .reduce((sum, [, n]) => sum + n, 0);
      console.log(
        `deadline storm (${transport}): ${expiredAll} calls expired (RST_STREAM each); calls without a deadline: ${JSON.stringify(Object.fromEntries(normal))}`,
      );
      // Past nghttp2's default burst of 1,000 resets, and then some.
      expect(expiredAll).toBeGreaterThan(2000);
      expect(normal).toEqual([['normal:OK', 8000]]);
    }, 120_000);
  },
);
