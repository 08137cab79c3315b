/**
 * What some rows of ours need beyond the key and subjects files, made once per run and
 * only when a selected row needs it: a test CA with server and client certificates and a
 * policy file (the mutual-TLS rows), an OTLP/HTTP sink on the load generator's CPUs (the
 * tracing rows), h2load (the rows under a background JWKS load), a revocations file and an
 * admin secret (the revocation rows), a throwaway redis-server (RevokeJwt on Redis).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoPath } from '../kit/paths.js';
import type { GhzTls } from '../ghz/ghz-args.js';
import { type CorePlan, pinnedCommand } from '../harness/cores.js';
import { makeClientCert } from '../kit/caller-certs.js';
import { hasOpenssl, makeTestCerts } from '../kit/certs.js';
import { findOnPath } from '../kit/exec.js';
import { type ServerProcess, startServer } from '../kit/launcher.js';
import { REDIS_INSTALL, findRedisServer, startRedisServer } from '../kit/redis.js';
import { REVOCATION_PRELOAD, writeRevocationsFile } from '../revocation/entries.js';
import { MAX_RATE } from '../../src/policy/schema.js';

/** What a row needs made before its first start. */
export type RowNeed = 'mtls' | 'otlp-sink' | 'h2load' | 'revocations' | 'redis';

/** The caller id of ghz's client certificate (its URI SAN), the one entry of the benchmark's policy. */
export const BENCH_CALLER_ID = 'spiffe://bench.jwt-grpc.test/ghz';
/** The subject the policy gives a request that names none (ghz's GenerateJwt request names none). */
export const BENCH_POLICY_SUBJECT = 'bench@example.com';

/** The files of the mutual-TLS rows: the server's side, ghz's side (`client`), and the policy. */
export interface BenchTls {
  readonly serverCert: string;
  readonly serverKey: string;
  /** The CA of the client certificates the server accepts (the same CA signed both sides). */
  readonly clientCa: string;
  readonly client: GhzTls;
  readonly policyFile: string;
}

/** The files of the revocation rows, in a 0700 temporary folder removed at the end of the run. */
export interface BenchRevocations {
  readonly dir: string;
  /** The revocations file `jwt-grpc-revocation` starts on: {@link REVOCATION_PRELOAD} live entries, never written during the columns (they only sign and verify). */
  readonly file: string;
  /** How many entries `file` holds. */
  readonly preloaded: number;
  readonly adminTokenFile: string;
  /** The secret in `adminTokenFile`, random per run: ghz's `authorization: Bearer` on RevokeJwt. Never written to the results. */
  readonly adminToken: string;
}

/** What the rows of a run were given; a field is null when no selected row needs it. */
export interface RowAssets {
  readonly tls: BenchTls | null;
  readonly revocations: BenchRevocations | null;
  /** A throwaway redis-server's URL (with its password) and pid; not pinned here (the RevokeJwt measurement pins it beside the server). */
  readonly redis: { readonly url: string; readonly pid: number } | null;
  /** The sink's traces URL, e.g. `http://127.0.0.1:40123/v1/traces`. */
  readonly otlpTracesEndpoint: string | null;
  readonly h2load: string | null;
  /**
   * Processes of the load side that run through the whole run (the OTLP sink): their CPU
   * is the load side's, like ghz's, and not "other processes'" (the ⊘ mark).
   */
  readonly loadSidePids: readonly number[];
}

export const NO_ASSETS: RowAssets = { tls: null, revocations: null, redis: null, otlpTracesEndpoint: null, h2load: null, loadSidePids: [] };

/**
 * The policy of the mutual-TLS + policy row: ghz's caller may get tokens for the one
 * subject, of any audience (the reference request names none), with every algorithm the
 * benchmark keys. What GenerateJwt then checks per call is what a deployment's policy
 * makes it check: the caller's entry, its subject, audience and algorithm rules, and its
 * rate, set to the largest a policy takes so that it counts every call but refuses none
 * (the default, 100 a second, would measure the rate limit instead of the server).
 */
export function benchPolicy(algorithms: readonly string[]): object {
  const rate = { perSecond: MAX_RATE, burst: MAX_RATE };
  return { callers: { [BENCH_CALLER_ID]: { subjects: [BENCH_POLICY_SUBJECT], algorithms: [...algorithms], rate } } };
}

/** Everything made for a run's rows, and how to release it. */
export interface PreparedAssets {
  readonly assets: RowAssets;
  /** Why a need could not be met (openssl or h2load missing), per need; rows with such a need are skipped. */
  readonly missing: ReadonlyMap<RowNeed, string>;
  /** Releases everything; resolves with notes for the summary (what the OTLP sink received: proof that spans were exported). */
  close(): Promise<string[]>;
}

const OTLP_SINK = repoPath('dist', 'bench', 'peers', 'otlp-sink', 'server.js');

/** Makes what `needs` asks for; the sink runs pinned to `loadCpus`. */
export async function prepareRowAssets(
  needs: ReadonlySet<RowNeed>,
  algorithms: readonly string[],
  plan: CorePlan,
  loadCpus: readonly number[],
): Promise<PreparedAssets> {
  const missing = new Map<RowNeed, string>();
  const cleanups: (() => unknown)[] = [];
  const notes: string[] = [];
  let tls: BenchTls | null = null;
  let sink: ServerProcess | null = null;
  let h2load: string | null = null;
  let revocations: BenchRevocations | null = null;
  let redis: { url: string; pid: number } | null = null;
  try {
    if (needs.has('revocations')) {
      const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-bench-revocations-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const adminToken = randomBytes(24).toString('base64url');
      const adminTokenFile = join(dir, 'admin-token');
      writeFileSync(adminTokenFile, `${adminToken}\n`, { mode: 0o600 });
      const file = join(dir, 'revocations.jsonl');
      writeRevocationsFile(file, REVOCATION_PRELOAD);
      revocations = { dir, file, preloaded: REVOCATION_PRELOAD, adminTokenFile, adminToken };
    }
    if (needs.has('redis')) {
      if (findRedisServer() === null) missing.set('redis', `redis-server is not installed (\`${REDIS_INSTALL}\`)`);
      else {
        const server = await startRedisServer();
        cleanups.push(() => server.stop());
        redis = { url: server.url(), pid: server.process.pid };
      }
    }
    if (needs.has('mtls')) {
      if (!hasOpenssl()) missing.set('mtls', 'openssl is not installed (the mutual-TLS rows make their certificates with it)');
      else {
        const certs = makeTestCerts();
        cleanups.push(() => certs.remove());
        const client = makeClientCert(certs, 'bench-ghz', `URI:${BENCH_CALLER_ID}`);
        const policyFile = join(certs.dir, 'policy.json');
        writeFileSync(policyFile, JSON.stringify(benchPolicy(algorithms)), { mode: 0o600 });
        tls = {
          serverCert: certs.files.serverCert,
          serverKey: certs.files.serverKey,
          clientCa: certs.files.caCert,
          client: { caCert: certs.files.caCert, cert: client.certFile, key: client.keyFile, serverName: 'localhost' },
          policyFile,
        };
      }
    }
    if (needs.has('otlp-sink')) {
      const { command, args } = pinnedCommand(plan, loadCpus, process.execPath, [OTLP_SINK]);
      sink = await startServer('the OTLP sink', command, args);
      const running = sink;
      cleanups.push(async () => {
        await running.stop(2000);
        const received = /received (\d+) requests, (\d+) bytes/.exec(running.stderr);
        notes.push(
          received === null
            ? 'the OTLP sink of the tracing rows did not report what it received'
            : `the OTLP sink of the tracing rows received ${received[1]} export requests (${received[2]} bytes) over the run`,
        );
      });
    }
    if (needs.has('h2load')) {
      h2load = findOnPath('h2load');
      if (h2load === null) missing.set('h2load', 'h2load is not installed (`apt-get install nghttp2-client`)');
    }
  } catch (error) {
    await Promise.all(cleanups.map((c) => c()));
    throw error;
  }
  return {
    assets: {
      tls,
      revocations,
      redis,
      otlpTracesEndpoint: sink === null ? null : `http://127.0.0.1:${sink.port}/v1/traces`,
      h2load,
      loadSidePids: sink === null ? [] : [sink.pid],
    },
    missing,
    close: async () => {
      await Promise.all(cleanups.splice(0).map((c) => c()));
      return notes;
    },
  };
}
