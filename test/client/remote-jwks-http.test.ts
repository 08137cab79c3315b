/**
 * httpJwksSource: a JWK Set over HTTP(S), found by OpenID discovery from an issuer URL or at a
 * given jwksUrl, cached by ETag; every failure (a status, an oversized body, a discovery naming
 * another issuer, a redirect, no answer) is ERR_FETCH naming the URL. A loopback server in this
 * process; the memory a verifier spends on an endless body is measured in a child process.
 */
import { spawn } from 'node:child_process';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import { type AddressInfo, type Socket, createServer as createTcpServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoPath } from '../../bench/kit/paths.js';
import { fetchDocument } from '../../src/protected-service/fetch-document.js';
import { HTTP_JWKS_DEFAULTS, httpJwksSource, isHttpJwksLocation } from '../../src/protected-service/remote-jwks-http.js';

type Route = (req: IncomingMessage, res: ServerResponse) => void;
const routes = new Map<string, Route>();
const seen: { path: string; ifNoneMatch: string | undefined }[] = [];
const server = createServer((req, res) => {
  seen.push({ path: req.url ?? '', ifNoneMatch: req.headers['if-none-match'] });
  const route = routes.get(req.url ?? '');
  if (route === undefined) res.writeHead(404).end();
  else route(req, res);
});
let base = '';
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});
const json =
  (body: unknown, headers: Record<string, string> = {}): Route =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(typeof body === 'string' ? body : JSON.stringify(body));
  };

describe('options', () => {
  it('recognises a location by issuerUrl or jwksUrl', () => {
    expect(isHttpJwksLocation({ issuerUrl: 'https://a' })).toBe(true);
    expect(isHttpJwksLocation({ jwksUrl: 'https://a' })).toBe(true);
    expect(isHttpJwksLocation({ target: 'a:443' })).toBe(false);
    expect(isHttpJwksLocation(null)).toBe(false);
  });

  it.each([
    [{ jwksUrl: 'not a url' }, 'jwksUrl', 'option jwksUrl: must be an http(s) URL, got "not a url"'],
    [{ jwksUrl: 'ftp://host/jwks' }, 'jwksUrl', 'option jwksUrl: must be an http(s) URL, got "ftp://host/jwks"'],
    [{ issuerUrl: 'file:///etc/passwd' }, 'issuerUrl', 'option issuerUrl: must be an http(s) URL, got "file:///etc/passwd"'],
  ])('refuses %j at creation', (location, field, message) => {
    expect(() => httpJwksSource(location)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_OPTION', field, message }));
  });

  it('keeps the issuer as given, byte for byte, and targets it', () => {
    const source = httpJwksSource({ issuerUrl: 'https://Issuer.example/tenant/' });
    expect(source.issuer).toBe('https://Issuer.example/tenant/');
    expect(source.target).toBe('https://Issuer.example/tenant/');
    expect(httpJwksSource({ jwksUrl: 'https://a.example/k' })).toMatchObject({ target: 'https://a.example/k', issuer: undefined });
  });
});

describe('getJwks', () => {
  it('fetches a jwksUrl and revalidates with its ETag, serving the cached body on 304', async () => {
    let version = 1;
    routes.set('/etag/jwks', (req, res) => {
      if (req.headers['if-none-match'] === '"v1"' && version === 1) return void res.writeHead(304, { etag: '"v1"' }).end();
      json({ keys: [], v: version }, { etag: `"v${version}"` })(req, res);
    });
    const source = httpJwksSource({ jwksUrl: `${base}/etag/jwks` });
    expect(await source.getJwks()).toEqual({ jwks_json: '{"keys":[],"v":1}' });
    expect(await source.getJwks()).toEqual({ jwks_json: '{"keys":[],"v":1}' });
    version = 2;
    expect(await source.getJwks()).toEqual({ jwks_json: '{"keys":[],"v":2}' });
    expect(seen.filter((s) => s.path === '/etag/jwks').map((s) => s.ifNoneMatch)).toEqual([undefined, '"v1"', '"v1"']);
  });

  it('finds jwks_uri by discovery once, from the issuer with its trailing slashes trimmed', async () => {
    const issuer = `${base}/tenant//`;
    routes.set('/tenant/.well-known/openid-configuration', json({ issuer, jwks_uri: `${base}/tenant/keys` }));
    routes.set('/tenant/keys', json({ keys: [] }));
    const source = httpJwksSource({ issuerUrl: issuer });
    await source.getJwks();
    await source.getJwks();
    expect(seen.filter((s) => s.path.startsWith('/tenant/')).map((s) => s.path)).toEqual([
      '/tenant/.well-known/openid-configuration',
      '/tenant/keys',
      '/tenant/keys',
    ]);
  });

  it.each([
    ['another issuer', { issuer: 'https://evil', jwks_uri: 'https://evil/keys' }, /names issuer "https:\/\/evil", not "http:\/\/127/],
    ['no jwks_uri', 'ISSUER', /has no jwks_uri$/],
    ['not JSON', '{', /: not JSON$/],
  ])('refuses a discovery document with %s', async (name, body, message) => {
    const path = `/disc-${name.replaceAll(' ', '-')}`;
    const issuer = `${base}${path}`;
    routes.set(`${path}/.well-known/openid-configuration`, json(body === 'ISSUER' ? { issuer } : body));
    await expect(httpJwksSource({ issuerUrl: issuer }).getJwks()).rejects.toMatchObject({
      code: 'ERR_FETCH',
      message: expect.stringMatching(message),
    });
  });

  it('refuses a status other than 200 or 304, naming the URL', async () => {
    await expect(httpJwksSource({ jwksUrl: `${base}/missing` }).getJwks()).rejects.toMatchObject({
      code: 'ERR_FETCH',
      message: `GET ${base}/missing: HTTP 404`,
    });
  });

  it('refuses a redirect rather than following it, as ERR_FETCH naming the URL', async () => {
    routes.set('/moved', (_req, res) => res.writeHead(302, { location: `${base}/etag/jwks` }).end());
    await expect(httpJwksSource({ jwksUrl: `${base}/moved` }).getJwks()).rejects.toMatchObject({
      code: 'ERR_FETCH',
      message: expect.stringMatching(new RegExp(`^GET ${base}/moved: .*redirect`)),
    });
    expect(seen.at(-1)?.path).toBe('/moved');
  });

  it('gives ERR_FETCH naming the URL, not a bare TypeError, when the issuer is unreachable', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    await expect(httpJwksSource({ issuerUrl: url }).getJwks()).rejects.toMatchObject({
      name: 'JwtGrpcError',
      code: 'ERR_FETCH',
      message: expect.stringMatching(new RegExp(`^GET ${url}/.well-known/openid-configuration: .*ECONNREFUSED`)),
    });
  });

  it('refuses a body over maxBytes, declared or not', async () => {
    const big = 'x'.repeat(HTTP_JWKS_DEFAULTS.maxBytes + 1);
    routes.set('/big-declared', (_req, res) => res.writeHead(200, { 'content-length': String(big.length) }).end(big));
    routes.set('/big-chunked', (_req, res) => {
      res.writeHead(200);
      res.write(big.slice(0, 1000));
      res.end(big.slice(1000));
    });
    await expect(httpJwksSource({ jwksUrl: `${base}/big-declared` }).getJwks()).rejects.toMatchObject({
      code: 'ERR_FETCH',
      message: `GET ${base}/big-declared: ${big.length} bytes, more than the limit of ${HTTP_JWKS_DEFAULTS.maxBytes}`,
    });
    await expect(httpJwksSource({ jwksUrl: `${base}/big-chunked` }).getJwks()).rejects.toMatchObject({
      code: 'ERR_FETCH',
      message: `GET ${base}/big-chunked: more than the limit of ${HTTP_JWKS_DEFAULTS.maxBytes} bytes`,
    });
  });
});

describe('fetchDocument', () => {
  it('gives ERR_FETCH at its deadline when the answer or its body stalls', async () => {
    routes.set('/stall-headers', () => {});
    routes.set('/stall-body', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"keys":');
    });
    for (const path of ['/stall-headers', '/stall-body']) {
      const started = Date.now();
      await expect(fetchDocument(`${base}${path}`, { timeoutMs: 200, maxBytes: 1_000 }, {})).rejects.toMatchObject({
        code: 'ERR_FETCH',
        message: `GET ${base}${path}: no complete answer within 200 ms`,
      });
      expect(Date.now() - started).toBeLessThan(2_000);
    }
    server.closeAllConnections();
  });
});

/** Writes `total` bytes of spaces to `out` as fast as the reader takes them; resolves with what was written when it closes. */
function pour(out: ServerResponse | Socket, total: number): Promise<number> {
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  let written = 0;
  const more = (): void => {
    while (written < total) {
      written += chunk.length;
      if (!out.write(chunk)) return void out.once('drain', more);
    }
    out.end();
  };
  more();
  return new Promise((resolve) => out.once('close', () => resolve(written)));
}

/** The growth of a verifier's RSS over one refresh, in MiB (its peak, sampled every 2 ms and 100 ms after, over its RSS after a GC), and how it ended. */
interface Refreshed {
  readonly growthMiB: number;
  readonly status: number | undefined;
  readonly cause: { readonly code?: string; readonly message?: string };
}

/**
 * What a verifier in a fresh process spends refreshing from a legitimate issuer (`legitUrl`,
 * a set as large as allowed) and then from `url`. Two legitimate refreshes come first: V8
 * sizes its heap on the first large reads of a process (some 10 and 20 MiB for the first two
 * 1 MiB sets, whatever the body), so "where it was" is a verifier that has done its normal
 * work. The library is the built one, as a consumer runs it.
 */
async function refreshInChild(legitUrl: string, url: string): Promise<{ legit: Refreshed; attacked: Refreshed }> {
  const script = `
    const { createRemoteVerifier, silentLogger } = await import(process.env.LIB);
    const options = { audience: 'api', logger: silentLogger };
    const rss = () => process.memoryUsage().rss / 2 ** 20;
    async function refresh(jwksUrl) {
      globalThis.gc();
      const before = rss();
      let peak = before;
      const sampler = setInterval(() => { peak = Math.max(peak, rss()); }, 2);
      const err = await createRemoteVerifier({ jwksUrl }, options).refresh().then(() => undefined, (e) => e);
      await new Promise((resolve) => setTimeout(resolve, 100));
      clearInterval(sampler);
      peak = Math.max(peak, rss());
      return { growthMiB: peak - before, status: err?.status, cause: { code: err?.cause?.code, message: err?.cause?.message } };
    }
    await refresh(process.env.LEGIT_URL);
    await refresh(process.env.LEGIT_URL);
    const legit = await refresh(process.env.LEGIT_URL);
    console.log(JSON.stringify({ legit, attacked: await refresh(process.env.URL) }));
  `;
  const child = spawn(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
    env: { ...process.env, LIB: repoPath('dist', 'src', 'lib', 'index.js'), LEGIT_URL: legitUrl, URL: url },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.on('data', (data: Buffer) => {
    stdout += data.toString();
  });
  await new Promise((resolve) => child.once('close', resolve));
  return JSON.parse(stdout);
}

describe('an endless body', () => {
  const HUNDRED_MIB = 100 << 20;
  const written: number[] = [];
  const raw = createTcpServer((socket) => {
    socket.on('error', () => {});
    // Answers a request with no length: the body ends when the connection closes (RFC 9112 section 6.3, rule 8).
    socket.once('data', () => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n');
      void pour(socket, HUNDRED_MIB).then((n) => written.push(n));
    });
  });
  let rawUrl = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    rawUrl = `http://127.0.0.1:${(raw.address() as AddressInfo).port}/jwks`;
    // The largest set allowed: what a legitimate issuer may send.
    const padding = HTTP_JWKS_DEFAULTS.maxBytes - JSON.stringify({ keys: [], padding: '' }).length;
    routes.set('/largest', json({ keys: [], padding: ' '.repeat(padding) }));
    routes.set('/endless-chunked', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      void pour(res, HUNDRED_MIB).then((n) => written.push(n));
    });
  });
  afterAll(async () => {
    await new Promise((resolve) => raw.close(resolve));
  });

  it.each([
    ['chunked', () => `${base}/endless-chunked`],
    ['close-delimited', () => rawUrl],
  ])(
    'of 100 MiB %s is cut off at maxBytes: the verifier RSS grows by less than 20 MiB and the server is stopped early',
    async (_kind, url) => {
      written.length = 0;
      const { legit, attacked } = await refreshInChild(`${base}/largest`, url());
      expect(legit.status, 'the largest set allowed is taken').toBeUndefined();
      expect(attacked).toMatchObject({
        status: 14,
        cause: { code: 'ERR_FETCH', message: `GET ${url()}: more than the limit of ${HTTP_JWKS_DEFAULTS.maxBytes} bytes` },
      });
      expect(attacked.growthMiB).toBeLessThan(20);
      await expect.poll(() => written.length).toBe(1);
      // What the kernel's socket buffers held when the verifier hung up, not the 100 MiB.
      expect(written[0]).toBeLessThan(HUNDRED_MIB / 4);
    },
  );
});
