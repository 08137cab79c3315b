// Bundles the `jwt-grpc` executable (dist/src/bin/jwt-grpc.js, built by tsc) into a few
// files, so that a command starts without resolving, reading and linking the ~200 ES modules
// of the library one by one: `serve` loaded 165 of jwt-grpc's own modules and 51 of
// @opentelemetry/api's, about 0.5 ms each on one core even from Node's compile cache
// (bench/PERFORMANCE.md, "Start-up", has the profile and the figures before and after).
// The library's entry points are not bundled: an app imports dist/src/lib/*.js as tsc wrote
// them, and shares its dependencies with them.
//
// - In the bundle: jwt-grpc's code and @opentelemetry/api (a required peer, imported by the
//   call path; OpenTelemetry's API keeps its state on globalThis under a versioned key, so an
//   SDK loaded from node_modules with `--otel` and this copy see the same providers).
// - Left in node_modules, loaded on first use: @grpc/grpc-js and what parses .proto files
//   (a peer an app shares with the CLI's client commands: one copy, one class of channel
//   credentials), pino, prom-client and every optional peer (src/base/optional-deps.ts).
// - Node's builtins by `require` instead of `import`: an ES import of a builtin builds a
//   facade that reads every export, and some exports are getters that load more of Node
//   (node:fs's `promises`, node:crypto's `webcrypto`): ~7 ms of a start on one core.
// - Chunks: a command loads only the code it runs (`token` none of the server's).
// - Licences: the bundled packages' licence texts go to third-party-licenses.txt beside it.
// Plain JavaScript, because it runs after the TypeScript build, on its output.
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN_DIR = join(ROOT, 'dist', 'src', 'bin');
const ENTRY = join(BIN_DIR, 'jwt-grpc.js');
const CHUNKS = 'chunks';
const LICENSES = 'third-party-licenses.txt';

/**
 * The one package bundled: @opentelemetry/api, a required peer the call path imports (see
 * above). Every other dependency and peer in package.json stays in node_modules, so that an
 * optional peer added there is never bundled by accident (test/bin/bundle.test.ts holds it).
 */
const BUNDLED = new Set(['@opentelemetry/api']);

/** Packages that stay out of the bundle: package.json's dependencies and peers but {@link BUNDLED}. */
function externalPackages() {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  return Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }).filter((name) => !BUNDLED.has(name));
}

/**
 * `import { x } from 'node:y'` reads `x` from process.getBuiltinModule('node:y') instead of
 * through an ES facade of the builtin. The virtual module exports each data property the
 * builtin has in the Node that builds (its names known here), read once as it loads; an
 * accessor property is left out, since reading it may load more of Node (node:fs's
 * `promises`, node:crypto's `webcrypto`): an import of one fails the build, naming it.
 * esbuild's own interop for a CommonJS stand-in would instead copy every property of the
 * builtin into a new object, per importing module: ~3.6 ms of a start for 388 properties.
 */
const builtinsByRequire = {
  name: 'builtins-by-require',
  setup(build) {
    // Static imports only: a dynamic import() of a builtin stays one (its namespace has the named exports).
    build.onResolve({ filter: /^node:/ }, (args) =>
      args.kind === 'import-statement' ? { path: args.path, namespace: 'node-builtin' } : { path: args.path, external: true },
    );
    build.onLoad({ filter: /.*/, namespace: 'node-builtin' }, (args) => ({ contents: builtinModuleSource(args.path), loader: 'js' }));
  },
};

/** The ES module that stands for builtin `id` in the bundle: see {@link builtinsByRequire}. */
function builtinModuleSource(id) {
  const builtin = process.getBuiltinModule(id);
  const names = Object.getOwnPropertyNames(builtin).filter(
    (name) => name !== 'default' && /^[A-Za-z_$][\w$]*$/.test(name) && 'value' in Object.getOwnPropertyDescriptor(builtin, name),
  );
  const quoted = JSON.stringify(id);
  // process.getBuiltinModule is Node >= 22.3; an older 22.x takes the banner's require.
  return [
    `const builtin = process.getBuiltinModule?.(${quoted}) ?? require(${quoted});`,
    'export default builtin;',
    ...names.map((name) => `export const ${name} = builtin.${name};`),
  ].join('\n');
}

/**
 * A `require` for the bundle's CommonJS parts and its builtins (an ES module has none of its
 * own), made on its first call: a chunk that requires nothing does not pay for createRequire.
 */
const BANNER = [
  "import { createRequire as __jwtGrpcCreateRequire } from 'node:module';",
  'let __jwtGrpcRequire;',
  'const require = (id) => (__jwtGrpcRequire ??= __jwtGrpcCreateRequire(import.meta.url))(id);',
].join('\n');

function fail(message) {
  console.error(`bundle: ${message}`);
  process.exit(1);
}

/** The bundled packages (from esbuild's metafile), each with its licence text. */
function licenseText(metafile) {
  const packages = new Map();
  for (const input of Object.keys(metafile.inputs)) {
    const match = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
    if (match !== null) packages.set(match[1], join(ROOT, input.slice(0, match.index + match[0].length)));
  }
  return [...packages]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, dir]) => {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      let text;
      try {
        text = readFileSync(join(dir, 'LICENSE'), 'utf8');
      } catch {
        fail(`${name} is bundled but has no LICENSE file to ship with it`);
      }
      return `${name}@${manifest.version} (${manifest.license})\n\n${text.trim()}\n`;
    })
    .join(`\n${'-'.repeat(72)}\n\n`);
}

async function main() {
  let esbuild;
  try {
    esbuild = createRequire(import.meta.url)('esbuild');
  } catch {
    fail('the build bundles the executable with esbuild, a dev dependency: run `npm ci` (without --omit=dev)');
  }
  // The bundle replaces tsc's output of the entry, which is its input: build both again.
  if (readFileSync(ENTRY, 'utf8').includes(BANNER)) fail(`${ENTRY} is bundled already: run \`npm run build\` (tsc, then this)`);
  rmSync(join(BIN_DIR, CHUNKS), { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: [ENTRY],
    outdir: BIN_DIR,
    allowOverwrite: true,
    chunkNames: `${CHUNKS}/[name]-[hash]`,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    external: externalPackages(),
    plugins: [builtinsByRequire],
    banner: { js: BANNER },
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'warning',
  });
  writeFileSync(join(BIN_DIR, LICENSES), licenseText(result.metafile));
  chmodSync(ENTRY, 0o755);
}

await main();
