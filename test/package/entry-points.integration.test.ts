/**
 * One concern per entry point (package.json `exports`), as jose keeps its own:
 * - an export lives in exactly one entry point (a verifier's result types, the same
 *   declarations, beside each verifier: SHARED), and src/lib/index.ts (the project's own view of
 *   the whole API) re-exports all of them and nothing else;
 * - importing an entry point loads its concern and no other: a node process records every
 *   module it loads (test/cli/fixtures/record-modules.mjs) while it imports the entry point
 *   by name, through `exports`, from the build (`npm run build` first). `jwt-grpc/client`
 *   loads no file of the HTTP/2 server, the cluster or the policy engine; and a GenerateJwt
 *   call through it, to a server on loopback, loads grpc-js but neither @grpc/proto-loader nor
 *   protobufjs (the client's codecs are src/jwt-service/codec/'s);
 * - an entry point's declarations name `@grpc/grpc-js` only where its API takes or gives a
 *   grpc-js object, and reach no other entry point's declarations.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';
import { generateKeys } from '../../src/lib/index.js';
import { closeAllServers, startServer } from '../../bench/kit/jwt-servers.js';
import { ENTRY_POINTS, entryPoint } from './entry-points.js';
import { reExports } from './examples.js';

const HOOK = join(PACKAGE_ROOT, 'test', 'cli', 'fixtures', 'record-modules.mjs');
const SPECIFIERS = ENTRY_POINTS.map((entry) => entry.specifier);

/**
 * The policy engine: enforcement, the policy file and its reload. The policy document's
 * checker (policy/document, policy/schema) is not among them: the option table, which
 * every entry point that takes options reads, checks a `policy` option with it.
 */
const POLICY_ENGINE = ['policy/enforce', 'policy/load', 'policy/reload'];
/** The issuer's own parts: its HTTP/2 server, createJwtServer, JwtService, the cluster and the policy engine. */
const ISSUER = ['transport/http2/', 'server/', 'jwt-service/', 'cluster/', ...POLICY_ENGINE];
/** The consumer's parts: the caller's (client/) and those inside a protected service. */
const CONSUMER = ['client/', 'protected-service/'];
/** Folders under src/ an import of each entry point must load no file of. */
const MUST_NOT_LOAD: Readonly<Record<string, readonly string[]>> = {
  'jwt-grpc': ['cluster/', ...CONSUMER],
  'jwt-grpc/keys': [...ISSUER, ...CONSUMER, 'tokens/'],
  'jwt-grpc/tokens': [...ISSUER, ...CONSUMER],
  // JwtService's method table and codecs (jwt-service/definition) are what the client calls with.
  'jwt-grpc/client': ['transport/http2/', 'server/', 'cluster/', ...POLICY_ENGINE],
  'jwt-grpc/cluster': CONSUMER,
  'jwt-grpc/discovery': [...ISSUER, ...CONSUMER, 'tokens/'],
  'jwt-grpc/grpc': [...ISSUER, ...CONSUMER, 'tokens/', 'keys/'],
  'jwt-grpc/errors': [...ISSUER, ...CONSUMER, 'tokens/', 'keys/', 'transport/'],
  'jwt-grpc/log': [...ISSUER, ...CONSUMER, 'tokens/', 'keys/', 'transport/'],
};
/** Packages no import loads: they load with the first server, client or health call. */
const LAZY_PACKAGES = ['@grpc/grpc-js', '@grpc/proto-loader', 'protobufjs'];

/**
 * Names more than one entry point exports, each the same declaration, and why: what a
 * function gives or takes is exported beside it, so that a program imports the verifier
 * and its result from one place.
 */
const SHARED: Readonly<Record<string, string>> = Object.fromEntries(
  [
    'ANY_AUDIENCE',
    'AnyAudience',
    'ClaimExpectations',
    'JwtPayload',
    'VerifiedToken',
    'VerifyFailure',
    'VerifyFailureReason',
    'VerifyResult',
  ].map((name) => [name, "createVerifier's (jwt-grpc/tokens) and createRemoteVerifier's (jwt-grpc/client) verify take and give it"]),
);

/** The entry points whose API takes or gives a grpc-js object, and which. */
const NAMES_GRPC_JS: Readonly<Record<string, string>> = {
  'jwt-grpc': 'addJwtService takes a grpc-js Server; createJwtServer takes grpc-js server options (transport grpc-js)',
  'jwt-grpc/client':
    'createJwtClient takes channel credentials, jwtCallCredentials gives CallCredentials, jwtAuthInterceptor is a ServerInterceptor',
  'jwt-grpc/cluster': "each worker's server options are createJwtServer's",
};

describe('the entry points', () => {
  it('are listed here, each with what it must not load', () => {
    expect(SPECIFIERS[0]).toBe('jwt-grpc');
    expect(SPECIFIERS, 'a new entry point: say in MUST_NOT_LOAD what it must not load').toEqual(Object.keys(MUST_NOT_LOAD));
    expect(
      Object.keys(NAMES_GRPC_JS).filter((name) => !SPECIFIERS.includes(name)),
      'NAMES_GRPC_JS names an entry point that is gone',
    ).toEqual([]);
  });

  it('export each name from exactly one of them, or the same declaration beside each function that gives or takes it', async () => {
    const owner = new Map<string, { specifier: string; file: string }>();
    const clashes: string[] = [];
    for (const entry of ENTRY_POINTS) {
      const exported = reExports(join(PACKAGE_ROOT, entry.source));
      const declared = [...exported.keys()];
      expect(declared.length, entry.specifier).toBeGreaterThan(0);
      for (const [name, file] of exported) {
        const first = owner.get(name);
        if (first !== undefined && (first.file !== file || !(name in SHARED)))
          clashes.push(`${name}: ${first.specifier} and ${entry.specifier}`);
        owner.set(name, { specifier: entry.specifier, file });
      }
      // What the module gives at run time is what its export lists say (no `export *` beside them).
      const runtime = Object.keys((await import(join(PACKAGE_ROOT, entry.source))) as object);
      expect(
        runtime.filter((name) => !declared.includes(name)),
        entry.specifier,
      ).toEqual([]);
    }
    expect(clashes).toEqual([]);
  });

  it('are all that src/lib/index.ts re-exports, and it nothing else', () => {
    const source = readFileSync(join(PACKAGE_ROOT, 'src', 'lib', 'index.ts'), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
    const statements = source.split('\n').filter((line) => line.trim() !== '');
    const reexported = statements.map((line) => /^export \* from '\.\/(.+)\.js';$/.exec(line)?.[1]);
    expect(
      reexported.filter((path) => path === undefined),
      `statements of src/lib/index.ts other than \`export * from\`:\n${statements.join('\n')}`,
    ).toEqual([]);
    expect(reexported.map((path) => `src/lib/${path}.ts`).sort()).toEqual(ENTRY_POINTS.map((entry) => entry.source).sort());
  });
});

describe('importing an entry point by name, from the build', () => {
  const loads = new Map<string, string[]>();
  let dir: string;

  beforeAll(async () => {
    if (!existsSync(join(PACKAGE_ROOT, entryPoint('jwt-grpc/client').module)))
      throw new Error('this test imports the build: run `npm run build` first');
    dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-entry-'));
    // Each in a process of its own, all at once. The process must exit by itself: a timer, a
    // socket or a worker left by the import would hold it open past the timeout.
    await Promise.all(
      ENTRY_POINTS.map(async (entry, index) => {
        const record = join(dir, `modules-${index}.txt`);
        await promisify(execFile)(
          process.execPath,
          ['--import', HOOK, '--input-type=module', '-e', `await import(${JSON.stringify(entry.specifier)})`],
          {
            cwd: PACKAGE_ROOT,
            env: { ...process.env, RECORD_MODULES: record },
            timeout: 20_000,
          },
        );
        loads.set(
          entry.specifier,
          readFileSync(record, 'utf8')
            .split('\n')
            .filter((url) => url !== ''),
        );
      }),
    );
  }, 60_000);

  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  /** jwt-grpc's own modules among those loaded, as paths under src/. */
  const own = (specifier: string): string[] =>
    (loads.get(specifier) ?? []).flatMap((url) => url.match(/\/dist\/src\/(.*)\.js$/)?.[1] ?? []);

  it.each(SPECIFIERS)('%s loads itself through `exports`, and none of the packages that load on first use', (specifier) => {
    expect(own(specifier)).toContain(
      entryPoint(specifier)
        .source.replace(/^src\//, '')
        .replace(/\.ts$/, ''),
    );
    const urls = loads.get(specifier) ?? [];
    expect(LAZY_PACKAGES.filter((name) => urls.some((url) => url.includes(`/node_modules/${name}/`)))).toEqual([]);
  });

  it.each(SPECIFIERS)('%s loads no file of the concerns that are not its own', (specifier) => {
    const forbidden = MUST_NOT_LOAD[specifier] ?? [];
    expect(own(specifier).filter((path) => forbidden.some((folder) => path.startsWith(folder)))).toEqual([]);
  });

  it("jwt-grpc/client: none of the HTTP/2 server, the cluster, the policy engine or OpenTelemetry, while the issuer's entry point loads all but the cluster", () => {
    const client = own('jwt-grpc/client');
    expect(client.filter((path) => /^(transport\/http2|cluster)\//.test(path) || POLICY_ENGINE.includes(path))).toEqual([]);
    expect(client).toContain('protected-service/remote-verifier');
    // Tracing loads with an SDK the app registers, not with the import (otelRegistered, src/base/optional-deps.ts).
    expect((loads.get('jwt-grpc/client') ?? []).filter((url) => url.includes('/node_modules/@opentelemetry/'))).toEqual([]);
    // The check reads what the recording holds: the issuer's import holds what the client's must not.
    const issuer = own('jwt-grpc');
    for (const folder of ['transport/http2/', 'server/', ...POLICY_ENGINE])
      expect(
        issuer.some((path) => path.startsWith(folder)),
        folder,
      ).toBe(true);
  });
});

describe('a call through jwt-grpc/client, from the build', () => {
  afterAll(() => closeAllServers());

  it('GenerateJwt to a server on loopback loads grpc-js, and neither @grpc/proto-loader, protobufjs nor OpenTelemetry', async () => {
    const { port } = await startServer({ transport: 'http2', keys: await generateKeys({ algorithms: ['HS256'] }) });
    const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-client-call-'));
    const record = join(dir, 'modules.txt');
    const script = [
      "const { createJwtClient } = await import('jwt-grpc/client');",
      'const jwt = createJwtClient(process.env.JWT_TARGET);',
      "const made = await jwt.generateJwt({ algorithm: 'HS256', subject: 'entry@example.com' });",
      'jwt.close();',
      'process.stdout.write(JSON.stringify(made));',
    ].join('\n');
    try {
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', HOOK, '--input-type=module', '-e', script], {
        cwd: PACKAGE_ROOT,
        env: { ...process.env, RECORD_MODULES: record, JWT_TARGET: `127.0.0.1:${port}` },
        timeout: 20_000,
      });
      expect(JSON.parse(stdout)).toMatchObject({ jwt: expect.stringMatching(/^ey/), sub: 'entry@example.com', kid: expect.any(String) });
      const urls = readFileSync(record, 'utf8').split('\n');
      expect(LAZY_PACKAGES.filter((name) => urls.some((url) => url.includes(`/node_modules/${name}/`)))).toEqual(['@grpc/grpc-js']);
      expect(urls.some((url) => url.endsWith('/dist/src/jwt-service/codec/decode-response.js'))).toBe(true);
      // No SDK registered in that process: its call made no span, and loaded no OpenTelemetry.
      expect(urls.filter((url) => url.includes('/node_modules/@opentelemetry/'))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

/** `from './x.js'`, `import('./x.js')`, `import './x.js'`: the modules a declaration file names. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;

/** The declaration files reachable from `types` (relative imports followed), each with the packages it names outside comments. */
function declarationGraph(types: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const visit = (file: string): void => {
    if (graph.has(file)) return;
    const code = readFileSync(file, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '');
    const specifiers = [...code.matchAll(SPECIFIER)].map((match) => match[1] as string);
    graph.set(
      file,
      specifiers.filter((specifier) => !specifier.startsWith('.')),
    );
    for (const specifier of specifiers) if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier.replace(/\.js$/, '.d.ts')));
  };
  visit(join(PACKAGE_ROOT, types));
  return graph;
}

describe('the declarations of each entry point', () => {
  const dist = join(PACKAGE_ROOT, 'dist', 'src');
  /** Declaration files of the public API: the entry points and src/lib/index.ts, which re-exports them all. */
  const entryFiles = new Set([join(dist, 'lib', 'index.d.ts'), ...ENTRY_POINTS.map((entry) => join(PACKAGE_ROOT, entry.types))]);

  it.each(SPECIFIERS)('%s names @grpc/grpc-js only where its API takes or gives a grpc-js object', (specifier) => {
    const graph = declarationGraph(entryPoint(specifier).types);
    expect(graph.size).toBeGreaterThan(1);
    const naming = [...graph].filter(([, packages]) => packages.includes('@grpc/grpc-js')).map(([file]) => relative(dist, file));
    if (specifier in NAMES_GRPC_JS) expect(naming.length, NAMES_GRPC_JS[specifier]).toBeGreaterThan(0);
    else expect(naming, `${specifier} needs no grpc-js type`).toEqual([]);
  });

  it.each(SPECIFIERS)("%s reaches no other entry point's declarations", (specifier) => {
    const own = join(PACKAGE_ROOT, entryPoint(specifier).types);
    const graph = declarationGraph(entryPoint(specifier).types);
    expect([...graph.keys()].filter((file) => file !== own && entryFiles.has(file)).map((file) => relative(dist, file))).toEqual([]);
  });
});
