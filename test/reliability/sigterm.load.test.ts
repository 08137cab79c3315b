/**
 * SIGTERM under load, single process and cluster (NODEMAXPROCS=2), through the CLI, on
 * each transport:
 * - under ghz load: the process exits 0 within the grace period, and no call that
 *   started before the signal (ghz's per-call details carry start times) fails, except
 *   with "the connection is draining": grpc-go's status for a stream the server never
 *   processed (numbered above the server's GOAWAY, grpc-go 1.56
 *   internal/transport/http2_client.go). Calls started after the signal may fail, as
 *   Unavailable only (single process: only refused dials and never-processed streams);
 * - 200 RS256 calls in flight over 4 connections when SIGTERM comes (sent right after
 *   every connection answered its first call): all 200 OK, and some completed after the
 *   signal, so they really were in flight;
 * - after SIGTERM, new connections are refused while a call that never ends (an HTTP/2
 *   stream left open) keeps the process draining; a second SIGTERM forces it out at once
 *   with a non-zero exit, workers included.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { sleep, waitUntil, within } from '../../bench/kit/wait.js';
import { isAlive } from '../../bench/kit/proc.js';
import { TRANSPORTS } from '../../bench/kit/jwt-servers.js';
import { reliabilityFixture } from './fixture.js';
import { detailEndMs, detailStartMs, errorsOf, okCount } from './ghz.js';
import { connectRefused, generate, grpcJsJwtClient, openRawCall, ready } from './helpers.js';
import { rawSession } from '../transport/helpers/raw.js';

const GRACE_MS = 5000;

/** grpc-go's error for a stream the server never processed (above the GOAWAY's last stream id, or opened after it). */
const UNPROCESSED = /the connection is draining/;
/**
 * ghz (grpc-go) errors of calls that never started on the server, single process: the
 * listener is closed at once, so new calls are refused. (A cluster's primary keeps
 * accepting for some ms while its workers close, and the connections it hands over are
 * then dropped: new calls also fail with "write: broken pipe" or a reset, which only the
 * calls' start times tell from a mid-call failure; the check above uses those.)
 */
const NEW_CALL_ERRORS = [/connect: connection refused/, UNPROCESSED, /error reading server preface/];

describe.skipIf(process.platform !== 'linux').each(TRANSPORTS)('SIGTERM under load, transport %s', (transport) => {
  const fixture = reliabilityFixture('sigterm', { algorithms: ['HS256', 'RS256'], ghz: true, transport });

  for (const workers of [1, 2]) {
    const mode = `${workers === 1 ? 'single process' : `cluster of ${workers}`} on ${transport}`;

    it(`${mode}: under ghz load, exits 0 within the grace period and only new calls fail`, async () => {
      const server = await fixture.serve({ workers, graceMs: GRACE_MS });
      // The signal comes 0.5 s before the end: once the listener is gone ghz redials in a tight
      // loop (about 200,000 refused dials a second), each one a line of its JSON report.
      const load = fixture.load({
        port: server.port,
        connections: 4,
        concurrency: 100,
        durationS: 3,
        name: `sigterm-${transport}-${workers}`,
      });
      await sleep(2500);
      const termWallMs = Date.now();
      const termAt = performance.now();
      server.signal('SIGTERM');
      const exit = await server.exited;
      const exitMs = (server.exitedAt as number) - termAt;
      const report = await load;

      const errors = errorsOf(report);
      const details = report.details ?? [];
      // ghz's details carry each call's start: a call that started before the signal ran
      // on a healthy connection, so it must end OK, or be one the server never took up.
      const startedBefore = details.filter((d) => detailStartMs(d) < termWallMs);
      const failedMidway = startedBefore.filter((d) => d.status !== 'OK' && !UNPROCESSED.test(d.error));
      const inFlightOk = startedBefore.filter((d) => d.status === 'OK' && detailEndMs(d) > termWallMs).length;
      const newCallErrors = Object.entries(errors).filter(([message]) => !NEW_CALL_ERRORS.some((re) => re.test(message)));
      console.log(
        `SIGTERM ${mode} under 4x100 load: exit ${exit.code} after ${exitMs.toFixed(0)} ms; ${report.count} calls ` +
          `(${details.length} with details), ${okCount(report)} OK; ${startedBefore.length} started before the signal, ` +
          `${inFlightOk} of them in flight at it and OK, ${failedMidway.length} failed; non-OK ${JSON.stringify(errors)}`,
      );

      expect(exit.code).toBe(0);
      expect(exitMs).toBeLessThan(GRACE_MS);
      expect(okCount(report)).toBeGreaterThan(0);
      expect(details.length, 'ghz kept no per-call details').toBe(report.count);
      expect(inFlightOk, 'no call was in flight at the signal: the test proved nothing').toBeGreaterThan(0);
      expect(
        failedMidway.map((d) => d.error),
        'calls started before the signal that failed',
      ).toEqual([]);
      // After the signal, new calls may fail, as Unavailable only.
      expect(Object.keys(report.statusCodeDistribution ?? {}).filter((s) => s !== 'OK' && s !== 'Unavailable')).toEqual([]);
      if (workers === 1) expect(newCallErrors, 'errors other than refused / never-processed calls').toEqual([]);
      expect(server.stderr).toMatch(/draining/);
    }, 60_000);

    it(`${mode}: 200 RS256 calls in flight at SIGTERM all complete OK`, async () => {
      const server = await fixture.serve({ workers, graceMs: GRACE_MS });
      const clients = Array.from({ length: 4 }, () => grpcJsJwtClient(server.port));
      try {
        await Promise.all(clients.map((c) => ready(c)));
        let termAt = Number.POSITIVE_INFINITY;
        const firsts: Promise<unknown>[] = [];
        const calls = clients.flatMap((client) => {
          const mine = Array.from({ length: 50 }, () =>
            generate(client, { algorithm: 'RS256', subject: 'drain@example.com' }, 30_000).then((r) => ({ ...r, at: performance.now() })),
          );
          firsts.push(Promise.race(mine));
          return mine;
        });
        // Every connection has answered once: the server has read its calls.
        await Promise.all(firsts);
        termAt = performance.now();
        server.signal('SIGTERM');
        const results = await Promise.all(calls);
        const exit = await server.exited;
        const exitMs = (server.exitedAt as number) - termAt;

        const failed = results.filter((r) => r.error !== null);
        const afterSignal = results.filter((r) => r.at > termAt).length;
        console.log(
          `SIGTERM ${mode} with 200 RS256 calls in flight: ${results.length - failed.length} OK, ${failed.length} failed ` +
            `${JSON.stringify(failed.slice(0, 3).map((r) => r.error?.message))}; ${afterSignal} completed after the signal; ` +
            `exit ${exit.code} after ${exitMs.toFixed(0)} ms`,
        );
        expect(failed.map((r) => r.error?.message)).toEqual([]);
        expect(afterSignal).toBeGreaterThan(0);
        expect(exit.code).toBe(0);
        expect(exitMs).toBeLessThan(GRACE_MS);
      } finally {
        for (const client of clients) client.close();
      }
    }, 60_000);

    it(`${mode}: after SIGTERM new connections are refused; a second SIGTERM forces a non-zero exit`, async () => {
      const server = await fixture.serve({ workers, graceMs: 60_000 });
      // A call that never ends: headers sent, body never finished. It keeps the drain waiting.
      const session = await rawSession(server.port);
      try {
        const stream = openRawCall(session, 'GenerateJwt');
        stream.on('error', () => {});
        await new Promise<void>((resolve) => session.ping(() => resolve()));

        const termAt = performance.now();
        server.signal('SIGTERM');
        const refused = await waitUntil(() => connectRefused(server.port, 500), 3000, 20);
        const refusedMs = performance.now() - termAt;
        await sleep(Math.max(0, 1000 - (performance.now() - termAt)));
        const drainingStill = server.exit === undefined;

        const secondAt = performance.now();
        server.signal('SIGTERM');
        const exit = await within(server.exited, 5000);
        await sleep(200);
        const workersLeft = server.workerPids.filter((pid) => pid !== server.pid && isAlive(pid));
        console.log(
          `SIGTERM ${mode}, a call left open: new connections refused ${refused ? `after ${refusedMs.toFixed(0)} ms` : 'NEVER'}; ` +
            `still draining after 1 s: ${drainingStill}; second SIGTERM: exit ${exit?.code ?? 'none'} ${exit?.signal ?? ''} ` +
            `after ${exit === undefined ? '>5000' : ((server.exitedAt as number) - secondAt).toFixed(0)} ms; workers left ${workersLeft.length}`,
        );
        expect(refused).toBe(true);
        expect(drainingStill).toBe(true);
        expect(exit).toBeDefined();
        expect(exit?.signal ?? null).toBeNull();
        expect(exit?.code).not.toBe(0);
        expect((server.exitedAt ?? Number.POSITIVE_INFINITY) - secondAt).toBeLessThan(2000);
        expect(workersLeft).toEqual([]);
      } finally {
        session.destroy();
      }
    }, 60_000);
  }
});
