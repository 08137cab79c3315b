/**
 * What the operations tests share: reading `/metrics`, a key file's entries, and clients
 * on connections of their own (so a cluster's workers all take part).
 */
import { readFileSync } from 'node:fs';
import type { ClientPool, JwtClient } from '../../bench/kit/grpc-clients.js';
import { fetchRaw } from '../../bench/kit/http.js';

/** One sample of the Prometheus text format: `name{a="x",b="y"} value`. */
export interface MetricSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** GET http://127.0.0.1:port/path: status, content type and body. */
export async function httpGet(port: number, path = '/metrics'): Promise<{ status: number; contentType: string; body: string }> {
  const { status, headers, body } = await fetchRaw(port, path, { timeoutMs: 10_000 });
  return { status, contentType: String(headers['content-type']), body };
}

/** Parses the Prometheus text exposition format (no escapes in label values: ours have none). */
export function parseMetrics(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)) labels[key as string] = value as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** Scrapes and parses `/metrics`. */
export async function scrape(port: number): Promise<MetricSample[]> {
  const response = await httpGet(port);
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}: ${response.body}`);
  return parseMetrics(response.body);
}

/** The value of the sample of `name` whose labels include `labels`; 0 when there is none (a counter not yet counted). */
export function valueOf(samples: readonly MetricSample[], name: string, labels: Readonly<Record<string, string>> = {}): number {
  const found = samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value ?? 0;
}

/** The port of the `metrics:` line of the CLI's banner. */
export function bannerMetricsPort(stdout: string): number {
  const match = /\n {2}metrics: http:\/\/127\.0\.0\.1:(\d+)\/metrics\n/.exec(stdout);
  if (match === null) throw new Error(`no metrics line in the banner:\n${stdout}`);
  return Number(match[1]);
}

/** A key file's entries as written. */
export function keyEntries(file: string): Record<string, unknown>[] {
  return (JSON.parse(readFileSync(file, 'utf8')) as { keys: Record<string, unknown>[] }).keys;
}

let channels = 0;

/** `count` clients, each on a connection of its own: node:cluster hands connections to workers in turn. */
export function clientsOnOwnConnections(pool: ClientPool, port: number, count: number): JwtClient[] {
  return Array.from({ length: count }, () => {
    channels += 1;
    return pool.jwt(port, { channelOptions: { 'grpc.primary_user_agent': `ops-test-${channels}` } });
  });
}
