/**
 * `jwt-grpc serve` loads a dependency only when an option asks for what it does: the own
 * transport with text logs runs without @grpc/grpc-js, prom-client and pino, which
 * together cost ~31 MB of resident memory (src/base/optional-deps.ts).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';

const HOOK = join(import.meta.dirname, 'fixtures', 'record-packages.mjs');
const OPTIONAL = [
  '@grpc/grpc-js',
  'prom-client',
  'pino',
  '@opentelemetry/sdk-trace',
  '@opentelemetry/exporter-trace-otlp-http',
  '@opentelemetry/exporter-trace-otlp-proto',
  '@opentelemetry/exporter-trace-otlp-grpc',
  'redis',
  'pkcs11js',
  '@aws-sdk/client-kms',
];
const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-deps-'));
let runs = 0;

/** The optional packages a `serve` with `extra` options (and `env`) loaded by the time it listened. */
async function optionalPackagesLoaded(extra: string[], env: Record<string, string> = {}): Promise<string[]> {
  const record = join(dir, `packages-${runs++}.txt`);
  await startCli(serveArgs(...extra), {
    nodeArgs: ['--import', HOOK],
    env: { ...env, RECORD_PACKAGES: record },
  });
  const resolved = new Set(readFileSync(record, 'utf8').split('\n'));
  return OPTIONAL.filter((name) => resolved.has(name));
}

afterEach(() => killAll());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('serve loads optional dependencies only when used', () => {
  it('own transport, text logs, no metrics: none of them', async () => {
    expect(await optionalPackagesLoaded([])).toEqual([]);
  });

  it('each option loads its own: --transport grpc-js, --metrics-port, --log-format json', async () => {
    expect(await optionalPackagesLoaded(['--transport', 'grpc-js'])).toEqual(['@grpc/grpc-js']);
    expect(await optionalPackagesLoaded(['--metrics-port', '0'])).toEqual(['prom-client']);
    expect(await optionalPackagesLoaded(['--log-format', 'json'])).toEqual(['pino']);
    // OTLP's default protocol, http/protobuf: its exporter only.
    expect(await optionalPackagesLoaded(['--otel'])).toEqual(['@opentelemetry/sdk-trace', '@opentelemetry/exporter-trace-otlp-proto']);
    // OTLP over gRPC: its exporter only (which loads grpc-js itself, from node_modules, unrecorded).
    expect(await optionalPackagesLoaded(['--otel'], { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toEqual([
      '@opentelemetry/sdk-trace',
      '@opentelemetry/exporter-trace-otlp-grpc',
    ]);
  });
});
