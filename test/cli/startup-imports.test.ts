/**
 * What a start loads: importing the package starts nothing and loads none of
 * @grpc/grpc-js, @grpc/proto-loader or protobufjs; `serve` on its own transport answers
 * its first GenerateJwt without them (JwtService's codecs are src/jwt-service/codec/'s),
 * loading the .proto parser only when a health call needs it; `token` loads none of the
 * server, and of the heavy packages only grpc-js.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runCli, serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';
import { repoPath } from '../../bench/kit/paths.js';
import { createJwtClient } from '../../src/lib/index.js';
import { healthClient } from '../reflection/clients.js';

const HOOK = join(import.meta.dirname, 'fixtures', 'record-modules.mjs');
/** The packages a start must not load, and where each one's files live. */
const HEAVY = ['@grpc/grpc-js', '@grpc/proto-loader', 'protobufjs'] as const;
const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-modules-'));
let runs = 0;

const nextRecord = (): string => join(dir, `modules-${runs++}.txt`);
const loaded = (record: string): string[] =>
  readFileSync(record, 'utf8')
    .split('\n')
    .filter((url) => url !== '');
/** Which of {@link HEAVY} the recorded modules include. */
const heavyIn = (urls: readonly string[]): string[] => HEAVY.filter((name) => urls.some((url) => url.includes(`/node_modules/${name}/`)));
/** jwt-grpc's own modules among them, as paths under dist/src/ (the library's files, as tsc wrote them). */
const ownIn = (urls: readonly string[]): string[] => urls.flatMap((url) => url.match(/\/dist\/src\/(.*)$/)?.[1] ?? []);
/**
 * The source files of jwt-grpc that the executable's bundle ran (src/bin/bundle.mjs): the
 * sources, in each loaded file's source map, of every file it loaded under dist/src/bin/,
 * as paths under src/ with a .js suffix, the names {@link ownIn} gives the library's.
 */
function bundledIn(urls: readonly string[]): string[] {
  return urls
    .filter((url) => /\/dist\/src\/bin\/.*\.js$/.test(url))
    .flatMap((url) => (JSON.parse(readFileSync(`${fileURLToPath(url)}.map`, 'utf8')) as { sources: string[] }).sources)
    .flatMap((source) => source.match(/(?:^|\/)src\/(.*)\.ts$/)?.[1] ?? [])
    .map((path) => `${path}.js`);
}

afterEach(() => killAll());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('what a start loads', () => {
  it("import('jwt-grpc') loads no grpc-js, proto-loader or protobufjs, and starts nothing", () => {
    const record = nextRecord();
    // The process must exit by itself: a timer, a socket or a worker left by the import would hold it open.
    // The `jwt-grpc` entry point; test/package/entry-points.integration.test.ts imports each of the others.
    execFileSync(
      process.execPath,
      ['--import', HOOK, '--input-type=module', '-e', `await import(${JSON.stringify(repoPath('dist', 'src', 'lib', 'issuer.js'))})`],
      {
        env: { ...process.env, RECORD_MODULES: record },
        timeout: 20_000,
      },
    );
    const urls = loaded(record);
    expect(ownIn(urls)).toContain('lib/issuer.js');
    expect(heavyIn(urls)).toEqual([]);
  });

  it.each(['http2', 'grpc-js'])(
    'serve --transport %s: the first OK GenerateJwt loads no proto-loader, protobufjs or undici',
    async (transport) => {
      const record = nextRecord();
      const server = await startCli(serveArgs('--transport', transport), {
        nodeArgs: ['--import', HOOK],
        env: { RECORD_MODULES: record },
      });
      const client = createJwtClient(`127.0.0.1:${server.port}`);
      try {
        expect((await client.generateJwt({ algorithm: 'HS256', subject: 'a' })).jwt).toMatch(/^ey/);
      } finally {
        client.close();
      }
      // The own transport loads grpc-js neither; the grpc-js transport is grpc-js.
      expect(heavyIn(loaded(record))).toEqual(transport === 'http2' ? [] : ['@grpc/grpc-js']);
      // Nor Node's bundled undici, which an ES import of node:http loads (src/base/optional-deps.ts, nodeHttp).
      expect((await server.stop()).code).toBe(0);
      expect(loaded(record).filter((line) => line.startsWith('internal:') && line.includes('undici'))).toEqual([]);
      expect(loaded(record).some((line) => line.startsWith('internal:'))).toBe(true); // the list was written
    },
  );

  it('serve: a health Check loads the .proto parser then, and is answered', async () => {
    const record = nextRecord();
    const server = await startCli(serveArgs(), {
      nodeArgs: ['--import', HOOK],
      env: { RECORD_MODULES: record },
    });
    const health = healthClient(`127.0.0.1:${server.port}`);
    try {
      expect(await health.check('')).toEqual({ status: 'SERVING' });
    } finally {
      health.close();
    }
    expect(heavyIn(loaded(record))).toEqual(['@grpc/proto-loader', 'protobufjs']);
  });

  it('token loads none of the server (no transport, cluster or server module), nor proto-loader or protobufjs', async () => {
    const server = await startCli(serveArgs());
    const record = nextRecord();
    const run = await runCli(['token', '--target', `127.0.0.1:${server.port}`, '--alg', 'HS256', '--sub', 'a'], {
      nodeArgs: ['--import', HOOK],
      env: { RECORD_MODULES: record },
    });
    expect(run.code).toBe(0);
    const own = bundledIn(loaded(record));
    expect(own).toContain('cli/client-commands.js');
    // The client's codecs are its own (src/jwt-service/codec/): no .proto parser on this path.
    expect(heavyIn(loaded(record))).toEqual(['@grpc/grpc-js']);
    expect(own.filter((path) => /^(transport\/http2|cluster|server\/(create|transports|health|reflection))/.test(path))).toEqual([]);
  });

  it("keeps V8's compile cache: a run leaves the compiled modules in os.tmpdir()/node-compile-cache", async () => {
    const tmp = mkdtempSync(join(dir, 'tmpdir-'));
    const run = await runCli(['--version'], { env: { TMPDIR: tmp } });
    expect(run.code).toBe(0);
    const cache = join(tmp, 'node-compile-cache');
    expect(existsSync(cache) && readdirSync(cache, { recursive: true }).length).toBeGreaterThan(0);
  });
});
