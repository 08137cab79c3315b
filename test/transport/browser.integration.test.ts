/**
 * A real browser calls JwtService on the own transport's port: Debian's chromium, headless,
 * under playwright-core, loads a page from a test HTTP server on another port (an origin of
 * its own) whose script (test/transport/browser/page.ts, bundled with esbuild) calls
 * GenerateJwt and VerifyJwt with connect-web's Connect and gRPC-Web transports, over
 * HTTP/1.1 with CORS as a web app does. The token it gets verifies over grpc-js; a page from
 * an origin not in `corsAllowedOrigins` reads no answer. Skipped where no `chromium` is on
 * PATH (.ci/run installs it on Debian).
 */
import { readFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { build, stop } from 'esbuild';
import { type Browser, type Page, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOnPath } from '../../bench/kit/exec.js';
import { ClientPool } from '../../bench/kit/grpc-clients.js';
import { closeAllServers, sharedKeys, startServer } from '../../bench/kit/jwt-servers.js';
import { DESCRIPTOR_SET_PATH } from '../../src/documents/descriptor-set.js';
import type { PageResult } from './browser/page.js';

const CHROMIUM = findOnPath('chromium') ?? findOnPath('chromium-browser');
if (CHROMIUM === null) console.warn('browser test skipped: no chromium on PATH');

const PAGE_SCRIPT = new URL('./browser/page.ts', import.meta.url).pathname;

/** A page server: an origin of its own, serving the page, its script and the descriptor set. */
async function pageOrigin(script: string): Promise<{ server: Server; origin: string }> {
  const descriptors = readFileSync(DESCRIPTOR_SET_PATH);
  const files: Record<string, [string, string | Buffer]> = {
    '/': ['text/html', '<!doctype html><meta charset="utf-8"><title>jwt-grpc</title><script type="module" src="/page.js"></script>'],
    '/page.js': ['text/javascript', script],
    '/descriptor-set.binpb': ['application/octet-stream', descriptors],
  };
  const server = createServer((request, response) => {
    const file = files[request.url ?? ''];
    if (file === undefined) response.writeHead(404).end();
    else response.writeHead(200, { 'content-type': file[0] }).end(file[1]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe.skipIf(CHROMIUM === null)('chromium with connect-web', () => {
  const clients = new ClientPool();
  const pages: Server[] = [];
  let browser: Browser;
  /** The page of the origin `corsAllowedOrigins` names, and one of an origin it does not. */
  let allowed: Page;
  /** What the pages wrote to their console: chromium names a CORS refusal there. */
  const consoleLines: string[] = [];
  let other: Page;
  let otherOrigin: string;
  let baseUrl: string;

  beforeAll(async () => {
    const bundle = await build({
      entryPoints: [PAGE_SCRIPT],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
    });
    const script = bundle.outputFiles[0]?.text ?? '';
    // esbuild's service process would outlive the file.
    await stop();
    const [app, elsewhere] = [await pageOrigin(script), await pageOrigin(script)];
    pages.push(app.server, elsewhere.server);
    const { port } = await startServer({ transport: 'http2', keys: await sharedKeys(), corsAllowedOrigins: [app.origin] });
    baseUrl = `http://127.0.0.1:${port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM as string, args: ['--no-sandbox'] });
    otherOrigin = elsewhere.origin;
    [allowed, other] = await Promise.all([open(app.origin), open(elsewhere.origin)]);
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    clients.closeAll();
    await closeAllServers();
    await Promise.all(pages.map((server) => new Promise((resolve) => server.close(resolve))));
  });

  /** A page of `origin`, its script loaded. */
  async function open(origin: string): Promise<Page> {
    const page = await browser.newPage();
    page.on('console', (message) => consoleLines.push(message.text()));
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => typeof (globalThis as { callJwt?: unknown }).callJwt === 'function');
    return page;
  }

  /** Runs the page's calls through `protocol`. */
  function callFrom(page: Page, protocol: 'connect' | 'grpc-web'): Promise<PageResult> {
    return page.evaluate(
      ([url, kind]) =>
        (globalThis as unknown as { callJwt: (url: string, kind: string) => Promise<PageResult> }).callJwt(url as string, kind as string),
      [baseUrl, protocol],
    );
  }

  it.each(['connect', 'grpc-web'] as const)('%s: the page issues a token and verifies it; grpc-js verifies it too', async (protocol) => {
    const result = await callFrom(allowed, protocol);
    expect(result).toMatchObject({ sub: 'ada', valid: true, verifiedSub: 'ada' });
    if (!('jwt' in result)) throw new Error(result.error);
    expect(JSON.parse(result.claims)).toMatchObject({ via: 'browser', sub: 'ada' });
    const port = Number(new URL(baseUrl).port);
    expect(await clients.jwt(port).verifyJwt({ jwt: result.jwt })).toMatchObject({ valid: true, sub: 'ada' });
  });

  it.each(['connect', 'grpc-web'] as const)('%s: a page of an origin not allowed reads no answer', async (protocol) => {
    const result = await callFrom(other, protocol);
    expect(result).not.toHaveProperty('jwt');
    expect(result).toMatchObject({ error: expect.stringMatching(/fetch/i) });
    // Refused by the browser for want of CORS headers, not by a server that is down: the other page is answered.
    expect(consoleLines.some((line) => line.includes(`from origin '${otherOrigin}' has been blocked by CORS policy`))).toBe(true);
  });
});
