/**
 * The package as a user gets it: `npm pack`, installed into a fresh TypeScript project
 * beside the newest `typescript` and `@types/node` from the registry, type-checked with
 * the defaults a new project has (strict, skipLibCheck false, module nodenext), then run:
 * a user's program, the CLI through `npx`, and every example of the documentation, as
 * rustdoc runs a crate's doctests: each ```ts block of README.md and docs/*.md and of the
 * TSDoc of the public API is a module of its own there, type-checked, and run when it is
 * marked ```ts run (test/package/examples.ts has the conventions).
 *
 * The pack is made from a copy of the sources, so its build writes a dist/ of its own and
 * never the one the other test files run the CLI from.
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runToExit, startServer } from '../../bench/kit/launcher.js';
import { INSTALL_TIMEOUT_MS, SETUP_TIMEOUT_MS, TIMEOUT_MS, packCopy, sh } from './packed.js';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';
import { type Example, markdownExamples, printedLines, tsdocExamples } from './examples.js';
import { ENTRY_POINTS } from './entry-points.js';

const VERSION = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

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
  include: ['main.ts', 'examples/*.ts'],
};

/**
 * The oldest TypeScript README.md states: the examples' `await using` needs 5.2. Checked with
 * skipLibCheck (what `tsc --init` writes), since the newest @types/node itself needs 5.6.
 */
const OLDEST_TYPESCRIPT = '5.2.2';

const EXAMPLES: readonly Example[] = [...markdownExamples(), ...tsdocExamples()];

/** A user's program: tokens without a server, then a server that listens and closes. */
const PROGRAM = `
import { type JwtServerOptions, createJwtServer } from 'jwt-grpc';
import { type Jwk, exportKeys, generateKeys } from 'jwt-grpc/keys';
import { type VerifyResult, createSigner, createVerifier } from 'jwt-grpc/tokens';

const keys = await generateKeys({ algorithms: ['HS256', 'ES256'] });
const signer = createSigner(keys);
const verifier = createVerifier(keys, { audience: 'api', clockToleranceSeconds: 5 });

const now = Math.floor(Date.now() / 1000);
const { token } = signer.sign('ES256', { sub: 'ada@example.com', aud: 'api', iat: now, exp: now + 7200 });
const result: VerifyResult = verifier.verify(token);
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

let work: string;
let app: string;
let tarballPath: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'jwt-grpc-pack-'));
  tarballPath = await packCopy(work);

  app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'jwt-grpc-user', private: true, type: 'module' }));
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
  // The docs' examples alone (README.md and docs/*.md), for the oldest TypeScript: what a reader copies.
  const pages = markdownExamples().map((example) => `examples/${example.name}.ts`);
  writeFileSync(
    join(app, 'tsconfig.oldest.json'),
    JSON.stringify({ ...TSCONFIG, include: pages, compilerOptions: { ...TSCONFIG.compilerOptions, noEmit: true } }),
  );
  writeFileSync(join(app, 'main.ts'), PROGRAM);
  mkdirSync(join(app, 'examples'));
  // `export {}` makes each block a module, so no two share a scope.
  for (const example of EXAMPLES) writeFileSync(join(app, 'examples', `${example.name}.ts`), `${example.code}\nexport {};\n`);
  try {
    await sh('npm', ['install', '--no-audit', '--no-fund', 'typescript@latest', '@types/node@latest', tarballPath], app, {
      what: 'npm install of the packed tarball (with typescript@latest and @types/node@latest)',
      timeoutMs: INSTALL_TIMEOUT_MS,
    });
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
}, SETUP_TIMEOUT_MS);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('the packed package in a fresh TypeScript project', () => {
  it(
    'type-checks with the newest typescript and @types/node, skipLibCheck false',
    async () => {
      const versions = ['typescript', '@types/node'].map(
        (name) => (JSON.parse(readFileSync(join(app, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version,
      );
      // tsc prints its diagnostics (ours included, as node_modules/jwt-grpc/dist/...) on stdout;
      // an example's as examples/NAME.ts, and the message says where each NAME comes from.
      const where = EXAMPLES.map((example) => `examples/${example.name}.ts: ${example.where}`).join('\n');
      await expect(
        sh('npx', ['tsc', '-p', '.'], app),
        `typescript ${versions[0]}, @types/node ${versions[1]}; the examples:\n${where}`,
      ).resolves.toBe('');
    },
    TIMEOUT_MS,
  );

  it(
    `type-checks the docs' examples with TypeScript ${OLDEST_TYPESCRIPT}, the oldest README.md states`,
    async () => {
      const readme = readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8');
      expect(readme).toContain(`TypeScript >= ${OLDEST_TYPESCRIPT.split('.').slice(0, 2).join('.')}`);
      await expect(
        sh('npx', ['--yes', '-p', `typescript@${OLDEST_TYPESCRIPT}`, 'tsc', '-p', 'tsconfig.oldest.json', '--skipLibCheck'], app),
      ).resolves.toBe('');
    },
    TIMEOUT_MS,
  );

  it(
    "runs a user's program: sign, verify, export, listen on 127.0.0.1:0 and close",
    async () => {
      const output = await sh('node', [join('out', 'main.js')], app);
      expect(output.split('\n')).toEqual(['verified ada@example.com', 'public keys EC', 'listening true HS256,ES256', 'closed', '']);
    },
    TIMEOUT_MS,
  );

  it('has examples to check: every block of README.md, docs/ and the TSDoc of every entry point', () => {
    expect(EXAMPLES.filter((example) => example.where.startsWith('README.md')).length).toBeGreaterThanOrEqual(2);
    expect(EXAMPLES.filter((example) => example.where.startsWith('docs/')).length).toBeGreaterThanOrEqual(6);
    expect(EXAMPLES.filter((example) => example.where.startsWith('src/')).length).toBeGreaterThan(60);
    expect(EXAMPLES.some((example) => example.run)).toBe(true);
    expect(EXAMPLES.filter((example) => example.run && printedLines(example.code).length > 0).length).toBeGreaterThanOrEqual(3);
  });

  it.each(EXAMPLES.filter((example) => example.run).map((example) => [example.where, example] as const))(
    'runs the example at %s, and it prints what its comments say',
    async (_where, example) => {
      const lines = (await sh('node', [join('out', 'examples', `${example.name}.js`)], app)).split('\n');
      expect(printedLines(example.code).filter((line) => !lines.includes(line))).toEqual([]);
    },
    TIMEOUT_MS,
  );

  it('ships its LICENSE, the docs the README links (the API reference included) and source maps that carry their sources (src/ is not shipped)', () => {
    const installed = join(app, 'node_modules', 'jwt-grpc');
    for (const page of ['library.md', 'cli.md', 'tracing.md', 'api/README.md', 'api/jwt-grpc/client/functions/createRemoteVerifier.md'])
      expect(existsSync(join(installed, 'docs', page)), page).toBe(true);
    expect(existsSync(join(installed, 'docs', 'img', 'headline-ratios.svg'))).toBe(true);
    expect(readFileSync(join(installed, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) 2026 jwt-grpc contributors/);
    expect(existsSync(join(installed, 'src'))).toBe(false);
    const map = JSON.parse(readFileSync(join(installed, 'dist', 'src', 'lib', 'issuer.js.map'), 'utf8')) as {
      sources: string[];
      sourcesContent?: string[];
    };
    expect(map.sourcesContent?.length).toBe(map.sources.length);
    expect(map.sourcesContent?.[0]).toContain('export');
  });

  it(
    'imports each entry point by name, and nothing below them (exports closes the rest)',
    async () => {
      const specifiers = ENTRY_POINTS.map((entry) => entry.specifier);
      const imported = await sh(
        'node',
        [
          '--input-type=module',
          '-e',
          `for (const s of ${JSON.stringify(specifiers)}) await import(s); console.log('${specifiers.length} imported')`,
        ],
        app,
      );
      expect(imported).toBe(`${specifiers.length} imported\n`);
      const deep = await runToExit('node', ['--input-type=module', '-e', "await import('jwt-grpc/dist/src/lib/index.js')"], {
        cwd: app,
        timeoutMs: TIMEOUT_MS,
      });
      expect(deep.stderr).toContain('ERR_PACKAGE_PATH_NOT_EXPORTED');
    },
    TIMEOUT_MS,
  );

  it(
    'passes publint and arethetypeswrong (ESM only; the .proto entry is no module)',
    async () => {
      // `npm run lint:package` runs the same two on the working tree.
      const bin = (name: string): string => join(PACKAGE_ROOT, 'node_modules', '.bin', name);
      await sh(bin('publint'), [], join(work, 'package'));
      await sh(bin('attw'), [tarballPath, '--profile', 'esm-only', '--exclude-entrypoints', './proto/jwt.proto'], work);
    },
    TIMEOUT_MS,
  );

  it('builds the bin with its run bit, so `npx jwt-grpc` in a clone works after a rebuild', () => {
    // The build in the copy the pack was made from: the same `npm run build` a clone runs.
    expect(statSync(join(work, 'package', 'dist', 'src', 'bin', 'jwt-grpc.js')).mode & 0o111).toBe(0o111);
  });

  it(
    'runs the CLI through npx',
    async () => {
      expect(await sh('npx', ['jwt-grpc', '--version'], app)).toBe(`${VERSION}\n`);
    },
    TIMEOUT_MS,
  );

  it(
    "walks README.md's Quick start with the install alone: serve, then token and verify through npx",
    async () => {
      writeFileSync(join(app, 'subjects.json'), '["ada@example.com", "grace@example.com"]');
      // The bin npx runs, started directly so that stopping it stops the server (npx does not pass SIGTERM on); port 0, not 50051.
      const bin = join(app, 'node_modules', '.bin', 'jwt-grpc');
      const server = await startServer(
        'jwt-grpc serve',
        bin,
        ['serve', '--subjects', 'subjects.json', '--host', '127.0.0.1', '--port', '0'],
        { cwd: app },
      );
      try {
        const target = `127.0.0.1:${server.port}`;
        const token = (
          await sh('npx', ['jwt-grpc', 'token', '--target', target, '--alg', 'ES256', '--sub', 'ada@example.com', '--aud', 'api'], app)
        ).trim();
        const verdict = JSON.parse(await sh('npx', ['jwt-grpc', 'verify', '--target', target, '--aud', 'api', token], app)) as unknown;
        expect(verdict).toMatchObject({ valid: true, sub: 'ada@example.com' });
        const refused = await runToExit('npx', ['jwt-grpc', 'verify', '--target', target, '--aud', 'other', token], {
          cwd: app,
          timeoutMs: TIMEOUT_MS,
        });
        expect([refused.code, JSON.parse(refused.stdout)]).toEqual([1, { valid: false, reason: 'AUDIENCE_MISMATCH' }]);
      } finally {
        expect(await server.stop()).toEqual({ code: 0, signal: null });
      }
    },
    TIMEOUT_MS,
  );
});

/**
 * Without the OpenTelemetry SDK, its exporters and redis (optional peers) in every install:
 * measured at 90 packages and 74.9 MB of node_modules when they were optionalDependencies,
 * 51 packages and 24.7 MB since.
 */
const LIGHT_INSTALL = { maxPackages: 60, maxBytes: 35 * 1024 * 1024 } as const;

/** Bytes of the files under `dir` (links not followed), as du counts them roughly. */
function bytesUnder(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += bytesUnder(path);
    else total += lstatSync(path).size;
  }
  return total;
}

describe('a fresh app with only jwt-grpc and @grpc/grpc-js', () => {
  let light: string;

  beforeAll(async () => {
    light = join(work, 'light-app');
    mkdirSync(light);
    writeFileSync(join(light, 'package.json'), JSON.stringify({ name: 'light-app', private: true, type: 'module' }));
    await sh('npm', ['install', '--no-audit', '--no-fund', tarballPath, '@grpc/grpc-js'], light);
  }, TIMEOUT_MS);

  it(`installs at most ${LIGHT_INSTALL.maxPackages} packages and ${LIGHT_INSTALL.maxBytes / 1024 / 1024} MB: no OpenTelemetry SDK, exporter or redis`, () => {
    const lock = JSON.parse(readFileSync(join(light, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
    const packages = Object.keys(lock.packages).filter((path) => path !== '');
    const bytes = bytesUnder(join(light, 'node_modules'));
    const report = `${packages.length} packages, ${(bytes / 1024 / 1024).toFixed(1)} MB`;
    expect(packages.length, report).toBeLessThanOrEqual(LIGHT_INSTALL.maxPackages);
    expect(bytes, report).toBeLessThanOrEqual(LIGHT_INSTALL.maxBytes);
    for (const heavy of [
      '@opentelemetry/sdk-trace',
      '@opentelemetry/exporter-trace-otlp-proto',
      '@opentelemetry/exporter-trace-otlp-grpc',
      'redis',
    ]) {
      expect(packages, heavy).not.toContain(`node_modules/${heavy}`);
    }
    // The API is a peer: one copy, at the top, shared with whatever SDK the app adds.
    expect(packages.filter((path) => path.endsWith('node_modules/@opentelemetry/api'))).toEqual(['node_modules/@opentelemetry/api']);
  });

  it(
    'works: serve, token and verify through npx',
    async () => {
      const bin = join(light, 'node_modules', '.bin', 'jwt-grpc');
      const server = await startServer('jwt-grpc serve', bin, ['serve', '--host', '127.0.0.1', '--port', '0'], { cwd: light });
      try {
        const target = `127.0.0.1:${server.port}`;
        const token = (
          await sh('npx', ['jwt-grpc', 'token', '--target', target, '--alg', 'ES256', '--sub', 'ada@example.com', '--aud', 'api'], light)
        ).trim();
        expect(JSON.parse(await sh('npx', ['jwt-grpc', 'verify', '--target', target, '--aud', 'api', token], light))).toMatchObject({
          valid: true,
        });
      } finally {
        expect(await server.stop()).toEqual({ code: 0, signal: null });
      }
    },
    TIMEOUT_MS,
  );

  it(
    '--otel and redis:// name the packages to install, in one line each, exit 2',
    async () => {
      const bin = join(light, 'node_modules', '.bin', 'jwt-grpc');
      const otel = await runToExit(bin, ['serve', '--otel', '--port', '0'], { cwd: light, timeoutMs: TIMEOUT_MS });
      expect(otel.code).toBe(2);
      expect(otel.stderr).toContain(
        'jwt-grpc: option --otel: true needs the OpenTelemetry SDK and its http/protobuf exporter, optional peer dependencies not installed here: ' +
          'npm install @opentelemetry/sdk-trace @opentelemetry/resources @opentelemetry/context-async-hooks @opentelemetry/exporter-trace-otlp-proto\n',
      );
      const redis = await runToExit(bin, ['serve', '--revocation-store', 'redis://127.0.0.1:6379/0', '--port', '0'], {
        cwd: light,
        timeoutMs: TIMEOUT_MS,
      });
      expect(redis.code).toBe(2);
      expect(redis.stderr).toContain('needs node-redis 5, an optional peer dependency not installed here: npm install redis@^5\n');
    },
    TIMEOUT_MS,
  );
});
