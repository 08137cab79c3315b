/**
 * A consumer bundled to one file, as docs/library.md ("Bundling") says: esbuild, platform
 * node, ESM, with the `createRequire` banner its CommonJS dependencies need. The bundle runs
 * in a fresh process from a folder where no node_modules can be reached, so everything it
 * uses is inside it: @grpc/grpc-js included, which jwt-grpc loads on first use through a
 * `require` bundlers follow. It verifies a token, protects a grpc-js service with the
 * interceptor, and calls it with the call credentials. A consumer that only verifies
 * bundles none of grpc-js (`npm run bench:import` measures its size against jose's).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, stop } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCerts, hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';
import { runToExit } from '../../bench/kit/launcher.js';
import { closeAllServers, startServer } from '../../bench/kit/jwt-servers.js';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';
import { generateKeys, silentLogger } from '../../src/lib/index.js';

const CONSUMER = fileURLToPath(new URL('./fixtures/bundled-consumer.mjs', import.meta.url));
/** The banner of docs/library.md's recipe: `require` for the CommonJS packages inside an ES module bundle. */
const BANNER =
  "import { createRequire as topLevelCreateRequire } from 'node:module'; const require = topLevelCreateRequire(import.meta.url);";

let certs: TestCerts;
let dir: string;

beforeAll(() => {
  if (!hasOpenssl()) throw new Error('this test needs the openssl command on PATH');
  if (!existsSync(join(PACKAGE_ROOT, 'dist', 'src', 'lib', 'client.js')))
    throw new Error('it bundles the build: run `npm run build` first');
  certs = makeTestCerts();
  dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-bundle-'));
});

afterAll(async () => {
  await stop(); // esbuild's service process
  await closeAllServers();
  certs?.remove();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('a consumer bundled to one file with esbuild', () => {
  it('runs where no node_modules is reachable: verify, call credentials and the interceptor', async () => {
    const outfile = join(dir, 'consumer.mjs');
    // The fixture lies inside the package: `jwt-grpc/client` resolves to the build through `exports`, as from an app.
    await build({
      entryPoints: [CONSUMER],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      banner: { js: BANNER },
      logLevel: 'error',
    });
    // Nothing above the bundle's folder holds a node_modules it could fall back on.
    for (let at = dir; dirname(at) !== at; at = dirname(at)) expect(existsSync(join(at, 'node_modules')), at).toBe(false);

    const { port } = await startServer({ transport: 'http2', keys: await generateKeys({ algorithms: ['ES256'] }), logger: silentLogger });
    const run = await runToExit(
      process.execPath,
      [outfile, `127.0.0.1:${port}`, certs.files.caCert, certs.files.serverCert, certs.files.serverKey],
      { cwd: dir, timeoutMs: 10_000 },
    );
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ valid: true, reply: 'hello ada' });
  }, 20_000);
  it('a verify-only consumer (createRemoteVerifier + verify) bundles no grpc-js, no OpenTelemetry and no server', async () => {
    const entry = join(PACKAGE_ROOT, 'test', 'package', 'fixtures', 'verify-only-consumer.mjs');
    const { metafile } = await build({
      entryPoints: [entry],
      outdir: dir,
      bundle: true,
      platform: 'node',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'error',
    });
    // What the bundle carries: the inputs with bytes in its output (esbuild parses more, and drops what nothing reaches).
    const inputs = Object.values(metafile.outputs).flatMap((output) =>
      Object.entries(output.inputs).flatMap(([path, { bytesInOutput }]) => (bytesInOutput > 0 ? [path] : [])),
    );
    expect(inputs.filter((path) => /node_modules\/(@grpc|@opentelemetry|protobufjs)\//.test(path))).toEqual([]);
    expect(inputs.filter((path) => /dist\/src\/(server|transport\/http2|cluster)\//.test(path))).toEqual([]);
    // The policy document's checker comes with the option table, which every options reader loads; the engine does not.
    expect(inputs.filter((path) => /dist\/src\/policy\/(enforce|load|reload)\.js$/.test(path))).toEqual([]);
    expect(inputs.some((path) => path.endsWith('dist/src/protected-service/remote-verifier.js'))).toBe(true);
  });
});
