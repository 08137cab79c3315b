/** The metrics port (src/metrics/http.ts), in process: GET and HEAD /metrics, 404 elsewhere, 500 when rendering fails, logged. */
import { afterEach, describe, expect, it } from 'vitest';
import { type MetricsEndpoint, hostOf, serveMetrics } from '../../src/metrics/http.js';

const endpoints: MetricsEndpoint[] = [];
afterEach(async () => {
  await Promise.all(endpoints.splice(0).map((endpoint) => endpoint.close()));
});

describe('hostOf', () => {
  it.each([
    ['127.0.0.1:9090', '127.0.0.1'],
    ['[::1]:9090', '::1'],
    ['0.0.0.0:0', '0.0.0.0'],
  ])('%s', (address, host) => {
    expect(hostOf(address)).toBe(host);
  });
});

describe('serveMetrics', () => {
  async function start(render: () => Promise<string>) {
    const errors: string[] = [];
    const logger = {
      info() {},
      warn() {},
      error: (message: string, fields?: unknown) => void errors.push(`${message} ${JSON.stringify(fields)}`),
    };
    const endpoint = await serveMetrics('127.0.0.1', 0, render, logger, { handshakeTimeoutMs: 5000 });
    endpoints.push(endpoint);
    const get = async (path: string, method = 'GET') => {
      const response = await fetch(`http://127.0.0.1:${endpoint.port}${path}`, { method });
      return { status: response.status, type: response.headers.get('content-type'), body: await response.text() };
    };
    return { get, errors };
  }

  it('renders on GET and HEAD /metrics, and refuses anything else with 404', async () => {
    let scrapes = 0;
    const { get } = await start(async () => `up ${++scrapes}\n`);
    expect(await get('/metrics')).toMatchObject({
      status: 200,
      type: expect.stringMatching(/^text\/plain; version=0\.0\.4/),
      body: 'up 1\n',
    });
    expect(await get('/metrics?x=1', 'HEAD')).toMatchObject({ status: 200, body: '' });
    for (const [path, method] of [
      ['/', 'GET'],
      ['/metrics/', 'GET'],
      ['/metrics', 'POST'],
    ] as const) {
      expect(await get(path, method), `${method} ${path}`).toMatchObject({ status: 404, body: 'not found: metrics are at GET /metrics\n' });
    }
  });

  it('answers 500 and logs why when rendering fails, and serves the next scrape', async () => {
    let fail = true;
    const { get, errors } = await start(async () => {
      if (fail) throw new Error('worker 2 did not answer');
      return 'ok 1\n';
    });
    expect(await get('/metrics')).toMatchObject({ status: 500, body: 'metrics unavailable\n' });
    expect(errors).toEqual(['metrics scrape failed {"error":"worker 2 did not answer"}']);
    fail = false;
    expect(await get('/metrics')).toMatchObject({ status: 200, body: 'ok 1\n' });
  });

  it('refuses a port in use, naming the option', async () => {
    await start(async () => '');
    const taken = endpoints[0]?.port as number;
    await expect(
      serveMetrics('127.0.0.1', taken, async () => '', { info() {}, warn() {}, error() {} }, { handshakeTimeoutMs: 5000 }),
    ).rejects.toMatchObject({
      code: 'ERR_LISTEN',
      field: 'metricsPort',
    });
  });
});
