/**
 * The discovery port (src/discovery/server.ts), in process on loopback: documents through the
 * handler, /healthz and /readyz (503 while draining or while the signing key is down), 404
 * for the rest, and a handler that throws answered 500 and logged, the port still serving.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type DiscoveryEndpoint, serveDiscovery } from '../../src/discovery/server.js';
import type { JwksRequestHandler } from '../../src/discovery/handler.js';

const endpoints: DiscoveryEndpoint[] = [];
afterEach(async () => {
  await Promise.all(endpoints.splice(0).map((endpoint) => endpoint.close()));
});

async function start(documents: JwksRequestHandler, ready?: () => boolean) {
  const errors: string[] = [];
  const logger = {
    info() {},
    warn() {},
    error: (message: string, fields?: Record<string, unknown>) => void errors.push(`${message} ${JSON.stringify(fields)}`),
  };
  const endpoint = await serveDiscovery({
    host: '127.0.0.1',
    port: 0,
    documents,
    logger,
    ports: { handshakeTimeoutMs: 5000 },
    ...(ready && { ready }),
  });
  endpoints.push(endpoint);
  const get = async (path: string, method = 'GET') => {
    const response = await fetch(`http://127.0.0.1:${endpoint.port}${path}`, { method });
    return { status: response.status, body: await response.text(), allow: response.headers.get('allow') };
  };
  return { endpoint, get, errors };
}

const documents: JwksRequestHandler = (request, response) => {
  if (request.url !== '/doc') return false;
  response.end('the document');
  return true;
};

describe('serveDiscovery', () => {
  it('serves the handler’s documents, probes, and 404 for the rest', async () => {
    const { get } = await start(documents);
    expect(await get('/doc')).toMatchObject({ status: 200, body: 'the document' });
    expect(await get('/healthz')).toMatchObject({ status: 200, body: 'ok\n' });
    expect(await get('/readyz?verbose')).toMatchObject({ status: 200, body: 'ok\n' });
    expect(await get('/readyz', 'HEAD')).toMatchObject({ status: 200, body: '' });
    expect(await get('/healthz', 'POST')).toMatchObject({ status: 405, allow: 'GET, HEAD', body: 'method not allowed: GET or HEAD\n' });
    expect(await get('/elsewhere')).toMatchObject({ status: 404, body: 'not found\n' });
  });

  it('says not ready while the signing key is down, and neither probe while draining', async () => {
    let ready = false;
    const { endpoint, get } = await start(documents, () => ready);
    expect(await get('/readyz')).toMatchObject({ status: 503, body: 'signing key unavailable\n' });
    expect(await get('/healthz')).toMatchObject({ status: 200 });
    ready = true;
    expect(await get('/readyz')).toMatchObject({ status: 200 });
    endpoint.drain();
    expect(await get('/readyz')).toMatchObject({ status: 503, body: 'draining\n' });
    expect(await get('/healthz')).toMatchObject({ status: 503, body: 'draining\n' });
  });

  it('answers 500 when a document cannot be built, logs why, and keeps serving', async () => {
    const { get, errors } = await start(() => {
      throw new Error('cannot export key');
    });
    expect(await get('/doc')).toMatchObject({ status: 500, body: 'internal error\n' });
    expect(errors).toEqual(['discovery: cannot answer {"error":"cannot export key"}']);
    expect(await get('/doc')).toMatchObject({ status: 500 });
  });

  it('refuses a port in use, naming the option', async () => {
    const { endpoint } = await start(documents);
    await expect(
      serveDiscovery({
        host: '127.0.0.1',
        port: endpoint.port,
        documents,
        logger: { info() {}, warn() {}, error() {} },
        ports: { handshakeTimeoutMs: 5000 },
      }),
    ).rejects.toMatchObject({
      code: 'ERR_LISTEN',
      field: 'httpPort',
      message: `cannot serve discovery on 127.0.0.1:${endpoint.port}: EADDRINUSE`,
    });
  });
});
