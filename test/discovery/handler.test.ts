/**
 * The documents handler (src/discovery/handler.ts) on an in-process HTTP server: its routes
 * (root and under the issuer path, the status list), GET and HEAD only, 304 on a matching
 * ETag, documents rebuilt when the keys change, false for any other path, and jwksHandler's
 * options refused by name.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentsHandler } from '../../src/discovery/handler.js';
import { type KeySet, exportKeys, generateKeys, jwksHandler } from '../../src/lib/index.js';

let keys: KeySet;
let listToken = 'header.list-1.sig';
let server: Server;
let base: string;

beforeAll(async () => {
  keys = await generateKeys({ algorithms: ['ES256'] });
  const handle = documentsHandler(
    () => keys,
    { issuer: 'https://auth.example/t', maxAgeSeconds: 60 },
    () => ({ prefix: '/statuslists/', token: (path) => (path === '/statuslists/1' ? listToken : undefined), maxAgeSeconds: 30 }),
  );
  server = createServer((request, response) => {
    if (!handle(request, response)) response.writeHead(404).end('not mine');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('documentsHandler', () => {
  it('serves the JWK Set at the root and under the issuer path, cacheable', async () => {
    for (const path of ['/.well-known/jwks.json', '/t/.well-known/jwks.json', '/.well-known/jwks.json?x=1']) {
      const response = await fetch(base + path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(response.headers.get('cache-control')).toBe('public, max-age=60');
      expect(await response.json()).toEqual(exportKeys(keys));
    }
  });

  it('serves the OpenID configuration, and leaves other paths to the caller', async () => {
    expect(await (await fetch(`${base}/t/.well-known/openid-configuration`)).json()).toMatchObject({ issuer: 'https://auth.example/t' });
    expect((await fetch(`${base}/.well-known/openid-configuration`)).status).toBe(200);
    for (const path of ['/other/.well-known/jwks.json', '/', '/t']) {
      const response = await fetch(base + path);
      expect(response.status, path).toBe(404);
      expect(await response.text()).toBe('not mine');
    }
  });

  it('answers a matching If-None-Match with 304, HEAD without a body, other methods with 405', async () => {
    const first = await fetch(`${base}/.well-known/jwks.json`);
    const etag = first.headers.get('etag') as string;
    const again = await fetch(`${base}/.well-known/jwks.json`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
    const head = await fetch(`${base}/.well-known/jwks.json`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(first.headers.get('content-length'));
    expect(await head.text()).toBe('');
    const post = await fetch(`${base}/.well-known/jwks.json`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(await post.text()).toBe('method not allowed: GET or HEAD\n');
  });

  it('rebuilds the documents, and their ETag, when the keys change', async () => {
    const before = (await fetch(`${base}/.well-known/jwks.json`)).headers.get('etag');
    const previous = keys;
    keys = await generateKeys({ algorithms: ['ES256'] });
    try {
      const response = await fetch(`${base}/.well-known/jwks.json`, { headers: { 'if-none-match': before as string } });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual(exportKeys(keys));
    } finally {
      keys = previous;
    }
  });

  it('serves the status list token as it is now, with its own type and max-age', async () => {
    const first = await fetch(`${base}/statuslists/1`);
    expect(first.headers.get('content-type')).toBe('application/statuslist+jwt');
    expect(first.headers.get('cache-control')).toBe('public, max-age=30');
    expect(await first.text()).toBe('header.list-1.sig');
    listToken = 'header.list-2.sig';
    const second = await fetch(`${base}/statuslists/1`, { headers: { 'if-none-match': first.headers.get('etag') as string } });
    expect(second.status).toBe(200);
    expect(await second.text()).toBe('header.list-2.sig');
    // Another list number is the issuer's to answer: none here, so 404, as for a path that is no list number.
    for (const path of ['/statuslists/2', '/statuslists/01', '/statuslists/', '/statuslists/1x'])
      expect((await fetch(`${base}${path}`)).status, path).toBe(404);
  });

  it('serves no configuration without an issuer', async () => {
    const handle = documentsHandler(() => keys);
    const request = { url: '/.well-known/openid-configuration', method: 'GET', headers: {} };
    expect(handle(request as never, {} as never)).toBe(false);
  });
});

describe('jwksHandler', () => {
  it('refuses an unknown option and a bad issuer or max-age, naming them', () => {
    expect(() => jwksHandler({ keys }, { maxAgeSecond: 5 } as never)).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_OPTION',
        message: 'option maxAgeSecond: is not an option of jwksHandler; did you mean maxAgeSeconds?',
      }),
    );
    expect(() => jwksHandler({ keys }, { issuer: 'auth.example' })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'issuer' }),
    );
    expect(() => jwksHandler({ keys }, { maxAgeSeconds: -1 })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', message: expect.stringMatching(/^option maxAgeSeconds: /) }),
    );
  });
});
