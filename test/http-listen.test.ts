/**
 * The HTTP ports' listener (src/base/http-listen.ts): deadlines node:http accepts, a bind failure
 * as ERR_LISTEN naming the port and the option, the guard's cap and close on every path.
 */
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionGuard } from '../src/base/connection-guard.js';
import { type HttpListener, headDeadline, listenHttp } from '../src/base/http-listen.js';
import { silentLogger } from '../src/lib/index.js';

const guard = (maxConnections = 4) =>
  new ConnectionGuard({ port: 'metrics', handshakeTimeoutMs: 1000, maxConnections, logger: silentLogger });

const listeners: HttpListener[] = [];
afterEach(async () => {
  await Promise.all(listeners.splice(0).map((listener) => listener.close()));
});

describe('headDeadline', () => {
  it('bounds the head by the handshake timeout, and never sets the request timeout below it', () => {
    expect(headDeadline(5000, 15000)).toEqual({ headersTimeout: 5000, requestTimeout: 15000, connectionsCheckingInterval: 1000 });
    expect(headDeadline(20000, 15000)).toEqual({ headersTimeout: 20000, requestTimeout: 20000, connectionsCheckingInterval: 1000 });
    expect(headDeadline(200, 15000).connectionsCheckingInterval).toBe(200);
  });
});

describe('listenHttp', () => {
  it('serves on an ephemeral port and closes, open connections included', async () => {
    const listener = await listenHttp(
      createServer((_req, res) => res.end('ok')),
      '127.0.0.1',
      0,
      'metrics',
      'metrics.port',
      guard(),
    );
    expect(listener.port).toBeGreaterThan(0);
    const body = await fetch(`http://127.0.0.1:${listener.port}/`, { headers: { connection: 'keep-alive' } }).then((res) => res.text());
    expect(body).toBe('ok');
    const idle = connect(listener.port, '127.0.0.1');
    await new Promise((resolve) => idle.once('connect', resolve));
    const closed = new Promise((resolve) => idle.once('close', resolve));
    await listener.close();
    await closed;
  });

  it('refuses a port in use as ERR_LISTEN naming what, where and the option', async () => {
    const first = await listenHttp(createServer(), '127.0.0.1', 0, 'metrics', 'metrics.port', guard());
    listeners.push(first);
    await expect(listenHttp(createServer(), '127.0.0.1', first.port, 'discovery', 'discovery.port', guard())).rejects.toMatchObject({
      code: 'ERR_LISTEN',
      field: 'discovery.port',
      message: `cannot serve discovery on 127.0.0.1:${first.port}: EADDRINUSE`,
    });
  });

  it('answers a malformed request with 400 and closes', async () => {
    const listener = await listenHttp(
      createServer((_req, res) => res.end('ok')),
      '127.0.0.1',
      0,
      'metrics',
      'metrics.port',
      guard(),
    );
    listeners.push(listener);
    const socket = connect(listener.port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('NOT HTTP\r\n\r\n');
    await new Promise((resolve) => socket.once('close', resolve));
    expect(answer).toBe('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
  });
});
