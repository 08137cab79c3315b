/**
 * The legitimate caller an attack test measures: every {@link CALL_EVERY_MS} one GenerateJwt
 * on a fresh channel (a new connection each time, as a new client meets the server) and one on
 * a channel kept for the whole run, and, where the server has them, one request to the
 * discovery port's JWK Set and one scrape of the metrics port, each on a new connection.
 */
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { get as getTls } from 'node:https';
import { credentials } from '@grpc/grpc-js';
import { createJwtClient } from '../../src/lib/index.js';
import type { AttackTls } from './attackers.js';

/** The subject the caller asks for (the one its policy entry allows, where there is a policy). */
export const CALLER_SUBJECT = 'legitimate-caller';
/** The caller: one call every 200 ms. */
export const CALL_EVERY_MS = 200;
/** Long enough that a slow call is measured as slow rather than cut short and counted as failed. */
const CALL_DEADLINE_MS = 10_000;

/** One call: whether it succeeded, how long it took, and why it failed. */
export interface CallRecord {
  readonly ok: boolean;
  readonly ms: number;
  readonly error?: string;
}

/** What a caller's kind of call saw. */
export interface CallerRecords {
  readonly fresh: CallRecord[];
  readonly longLived: CallRecord[];
  readonly discovery: CallRecord[];
  readonly metrics: CallRecord[];
}

export interface CallerTarget {
  readonly host: string;
  readonly grpcPort: number;
  readonly httpPort: number | undefined;
  readonly metricsPort: number | undefined;
  /** Calls over mutual TLS with this certificate (and the discovery port over TLS); default plaintext. */
  readonly tls?: AttackTls;
}

async function timed(call: () => Promise<unknown>): Promise<CallRecord> {
  const start = performance.now();
  try {
    await call();
    return { ok: true, ms: performance.now() - start };
  } catch (error) {
    return { ok: false, ms: performance.now() - start, error: errorName(error) };
  }
}

function errorName(error: unknown): string {
  const { code, details, message } = error as { code?: unknown; details?: string; message?: string };
  // Without the timestamps grpc-js puts in its messages, so that equal failures are counted together.
  const text = (details ?? message ?? '').replace(/ ?\(\d{4}-\d\d-\d\dT[\d:.]+Z\)/g, '');
  return `${String(code ?? 'error')}: ${text.slice(0, 120)}`;
}

/** GET on a connection of its own (no agent), answered 200 within the deadline; over TLS trusting `ca` when given. */
function freshGet(host: string, port: number, path: string, ca?: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const options = { host, port, path, agent: false, timeout: CALL_DEADLINE_MS };
    // The server's certificate names localhost (RFC 6066 leaves IP addresses out of SNI).
    const request = (ca === undefined ? get : getTls)(
      ca === undefined ? options : { ...options, ca, servername: 'localhost' },
      (response) => {
        response.resume();
        response.once('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${response.statusCode}`))));
        response.once('error', reject);
      },
    );
    request.once('timeout', () => request.destroy(new Error('timed out')));
    request.once('error', reject);
  });
}

/** Calls until {@link LegitimateCaller.stop}; `record` false during warm-up. */
export class LegitimateCaller {
  readonly #target: CallerTarget;
  readonly #records: CallerRecords = { fresh: [], longLived: [], discovery: [], metrics: [] };
  readonly #longLived;
  readonly #channel;
  readonly #ca: Buffer | undefined;
  readonly #inFlight = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #recording = false;

  constructor(target: CallerTarget) {
    this.#target = target;
    const { tls } = target;
    this.#ca = tls === undefined ? undefined : readFileSync(tls.ca);
    this.#channel = {
      deadlineMs: CALL_DEADLINE_MS,
      ...(tls !== undefined && { credentials: credentials.createSsl(this.#ca, readFileSync(tls.key), readFileSync(tls.cert)) }),
    };
    this.#longLived = createJwtClient(`${target.host}:${target.grpcPort}`, this.#channel);
  }

  /** Starts calling; what it sees is kept once `record` is true. */
  start(): void {
    this.#timer = setInterval(() => this.#tick(), CALL_EVERY_MS);
  }

  /** From now on, the calls are kept. */
  record(): void {
    this.#recording = true;
  }

  /** Stops calling, waits for the calls in flight, and returns what was kept. */
  async stop(): Promise<CallerRecords> {
    clearInterval(this.#timer);
    await Promise.all(this.#inFlight);
    this.#longLived.close();
    return this.#records;
  }

  #tick(): void {
    const { host, grpcPort, httpPort, metricsPort } = this.#target;
    const request = { algorithm: 'HS256', subject: CALLER_SUBJECT };
    this.#track('fresh', async () => {
      // A local subchannel pool: grpc-js would otherwise share one connection between channels to the same target.
      const client = createJwtClient(`${host}:${grpcPort}`, { ...this.#channel, channelOptions: { 'grpc.use_local_subchannel_pool': 1 } });
      try {
        await client.generateJwt(request);
      } finally {
        client.close();
      }
    });
    this.#track('longLived', () => this.#longLived.generateJwt(request));
    if (httpPort !== undefined) this.#track('discovery', () => freshGet(host, httpPort, '/.well-known/jwks.json', this.#ca));
    if (metricsPort !== undefined) this.#track('metrics', () => freshGet(host, metricsPort, '/metrics'));
  }

  #track(kind: keyof CallerRecords, call: () => Promise<unknown>): void {
    const recording = this.#recording;
    const done = timed(call).then((record) => {
      if (recording) this.#records[kind].push(record);
    });
    this.#inFlight.add(done);
    void done.finally(() => this.#inFlight.delete(done));
  }
}
