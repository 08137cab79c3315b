/**
 * The package as a user gets it: `npm pack`, installed into a fresh TypeScript project
 * beside the newest `typescript` and `@types/node` from the registry, type-checked with
 * the defaults a new project has (strict, skipLibCheck false, module nodenext), then run:
 * the README's examples and the CLI through `npx`.
 *
 * The pack is made from a copy of the sources, so its build writes a dist/ of its own and
 * never the one the other test files run the CLI from.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runToExit } from '../../bench/harness/launcher.js';
import { PACKAGE_ROOT } from '../../src/package-root.js';

const VERSION = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
/** Installing from the registry is the slow part: generous, but bounded. */
const TIMEOUT_MS = 240_000;

/** What `npm pack` reads: the manifest, the sources its `prepack` builds, and the files it ships. */
const PACKAGE_INPUTS = ['package.json', 'README.md', 'LICENSE', 'tsconfig.json', 'tsconfig.build.json', 'src', 'proto'];

const TSCONFIG = {
  compilerOptions: {
    target: 'esnext',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    strict: true,
    skipLibCheck: false,
    types: ['node'],
    outDir: 'out',
  },
  include: ['main.ts'],
};

/** The README's examples, as a user's program: tokens without a server, then a server that listens and closes. */
const PROGRAM = `
import { type Jwk, type JwtServerOptions, type VerifyResult, createJwtServer, createSigner, createVerifier, exportKeys, generateKeys } from 'jwt-grpc';

const keys = await generateKeys({ algorithms: ['HS256', 'ES256'] });
const signer = createSigner(keys);
const verifier = createVerifier(keys, { clockToleranceSeconds: 5 });

const now = Math.floor(Date.now() / 1000);
const { token } = signer.sign('ES256', { sub: 'ada@example.com', aud: 'api', iat: now, exp: now + 7200 });
const result: VerifyResult = verifier.verify(token, { audience: 'api' });
if (result.valid) console.log('verified', result.payload.sub);
else console.log('refused', result.reason, result.message);

const published: Jwk[] = exportKeys(keys).keys;
console.log('public keys', published.map((jwk) => jwk.kty).join(','));

const options: JwtServerOptions = { keys, subjects: ['ada@example.com'], issuer: 'https://auth.example' };
{
  await using server = createJwtServer(options);
  const port = await server.listen('127.0.0.1:0');
  console.log('listening', port > 0, server.service.keys.signingAlgorithms.join(','));
}
console.log('closed');
`;

/** Runs a command; on failure, an error carrying its output. */
async function sh(command: string, args: readonly string[], cwd: string): Promise<string> {
  const run = await runToExit(command, args, { cwd, timeoutMs: TIMEOUT_MS });
  if (run.code === 0) return run.stdout;
  const how = run.timedOut ? `timed out after ${TIMEOUT_MS} ms` : `exit ${run.code ?? run.signal}`;
  throw new Error(`${command} ${args.join(' ')} failed in ${cwd} (${how}):\n${run.stdout}\n${run.stderr}`);
}

let work: string;
let app: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'jwt-grpc-pack-'));
  const source = join(work, 'package');
  mkdirSync(source);
  for (const input of PACKAGE_INPUTS) cpSync(join(PACKAGE_ROOT, input), join(source, input), { recursive: true });
  // The build needs the compiler and the types; the tarball takes nothing from here.
  symlinkSync(join(PACKAGE_ROOT, 'node_modules'), join(source, 'node_modules'), 'dir');
  await sh('npm', ['pack', '--pack-destination', work], source);
  const tarball = readdirSync(work).find((name) => name.startsWith('jwt-grpc-') && name.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`npm pack left no jwt-grpc-*.tgz in ${work}`);

  app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'jwt-grpc-user', private: true, type: 'module' }));
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
  writeFileSync(join(app, 'main.ts'), PROGRAM);
  try {
    await sh('npm', ['install', '--no-audit', '--no-fund', 'typescript@latest', '@types/node@latest', join(work, tarball)], app);
  } catch (err) {
    if (/ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH|FetchError/.test((err as Error).message)) {
      throw new Error(
        'this test installs typescript@latest and @types/node@latest from the npm registry, which cannot be reached ' +
          `from here; run it where the registry is reachable.\n${(err as Error).message}`,
        { cause: err },
      );
    }
    throw err;
  }
}, TIMEOUT_MS);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('the packed package in a fresh TypeScript project', () => {
  it('type-checks with the newest typescript and @types/node, skipLibCheck false', async () => {
    const versions = ['typescript', '@types/node'].map(
      (name) => (JSON.parse(readFileSync(join(app, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version,
    );
    // tsc prints its diagnostics (ours included, as node_modules/jwt-grpc/dist/...) on stdout.
    await expect(sh('npx', ['tsc', '-p', '.'], app), `typescript ${versions[0]}, @types/node ${versions[1]}`).resolves.toBe('');
  }, TIMEOUT_MS);

  it('runs the README examples: sign, verify, export, listen on 127.0.0.1:0 and close', async () => {
    const output = await sh('node', [join('out', 'main.js')], app);
    expect(output.split('\n')).toEqual([
      'verified ada@example.com',
      'public keys EC',
      'listening true HS256,ES256',
      'closed',
      '',
    ]);
  }, TIMEOUT_MS);

  it('ships its LICENSE and source maps that carry their sources (src/ is not shipped)', () => {
    const installed = join(app, 'node_modules', 'jwt-grpc');
    expect(readFileSync(join(installed, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) 2026 jwt-grpc contributors/);
    expect(existsSync(join(installed, 'src'))).toBe(false);
    const map = JSON.parse(readFileSync(join(installed, 'dist', 'src', 'lib.js.map'), 'utf8')) as { sources: string[]; sourcesContent?: string[] };
    expect(map.sourcesContent?.length).toBe(map.sources.length);
    expect(map.sourcesContent?.[0]).toContain('export');
  });

  it('builds the bin with its run bit, so `npx jwt-grpc` in a clone works after a rebuild', () => {
    // The build in the copy the pack was made from: the same `npm run build` a clone runs.
    expect(statSync(join(work, 'package', 'dist', 'src', 'bin', 'jwt-grpc.js')).mode & 0o111).toBe(0o111);
  });

  it('runs the CLI through npx', async () => {
    expect(await sh('npx', ['jwt-grpc', '--version'], app)).toBe(`${VERSION}\n`);
  }, TIMEOUT_MS);
});
