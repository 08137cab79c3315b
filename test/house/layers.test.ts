/**
 * The layers of src/: every import (type imports and dynamic imports included) runs
 * downward or within its own layer, and no files import each other in a circle. A
 * maintainer reads the order of the code from LAYERS below; a new upward import fails
 * here with the file, the import and both layers named. bench/ and test/ are one-way
 * too: the kit (bench/kit/, the one home of test support) imports only itself and src/,
 * bench/ never imports test/, and no circle of imports runs through either; a break fails
 * here with the file and the import named, a circle with its files in order.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = join(ROOT, 'src');
const BENCH = join(ROOT, 'bench');
const TEST = join(ROOT, 'test');

/**
 * From the bottom up, each a list of folders of src/, never a single file (a nested folder
 * is a layer of its own, above or below its parent's; a file belongs to its deepest listed
 * folder). A file may import its own layer and any layer listed before it.
 */
const LAYERS: readonly { readonly name: string; readonly folders: readonly string[] }[] = [
  // Shared by everything: the typed error, the logger, where the package lies, lazy optional dependencies, reading a secret file, refusing an unknown option name, guarding a port's connections, the deadlines on what a connected peer holds, a port a cluster's primary holds, an address's host and port, what a drain waits for.
  { name: 'base', folders: ['base/'] },
  // What the layers above serve or keep, stated below the option table that takes them as options: the gRPC handler API every transport serves (handlers, metadata, status, interceptors) and what a revocation store is.
  { name: 'contracts', folders: ['contracts/'] },
  // The algorithm table: one file per family, and the JWK members each family reads and writes.
  { name: 'algorithms', folders: ['algorithms/'] },
  // Key material: generate, import, load, export, the KeySet, rotation and reload.
  { name: 'keys', folders: ['keys/'] },
  // The issuance policy: its shape, its JSON Schema and the checker read from it, who may get which token, reading and reloading the policy file. Below the option table, whose `policy` option is one.
  { name: 'policy', folders: ['policy/'] },
  // The option table: names, defaults, bounds, flags, environment twins. Below the
  // transports, which take their defaults and bounds from it.
  { name: 'options', folders: ['options/'] },
  // Bytes the served protocols read or answer with: a document's strong ETag, the compiled descriptor set.
  { name: 'documents', folders: ['documents/'] },
  // What every transport shares (the call's core, the caller's identity) and the @grpc/grpc-js adapter.
  { name: 'transport', folders: ['transport/'] },
  // HTTP/2 itself on node:net: frames, HPACK, streams, flow control.
  { name: 'wire', folders: ['transport/http2/wire/'] },
  // gRPC on the own HTTP/2: calls, framing, deadlines, compression, routing; Connect and gRPC-Web beside it, over one HTTP exchange; HTTP/1.1 on the same port (node:http, handed the connections the sniff gives it).
  { name: 'http2', folders: ['transport/http2/', 'transport/protocols/', 'transport/http1/'] },
  // The public documents over HTTP: OpenID discovery and the JWK Set, their ETag, the node:http handler.
  { name: 'discovery', folders: ['discovery/'] },
  // The signing path: sign, verify, claims, the verification cache.
  { name: 'tokens', folders: ['tokens/'] },
  // The shipped .proto files loaded into the handler API's shape.
  { name: 'protos', folders: ['protos/'] },
  // Revocation: the in-memory set VerifyJwt reads, the stores that feed it (file, Redis), who may revoke, and the Token Status List (codec, list, index blocks, signed list).
  { name: 'revocation', folders: ['revocation/'] },
  // Prometheus metrics: the call interceptor, JwtService's counters, /metrics, the cluster's sum.
  { name: 'metrics', folders: ['metrics/'] },
  // OpenTelemetry: the server-span interceptor, trace context from metadata, client spans, --otel's own SDK pipeline.
  { name: 'tracing', folders: ['tracing/'] },
  // JwtService: messages, codecs, request -> claims, handlers, its options; token exchange's
  // decision, trust file and token endpoint, which the service runs on a trust it is handed.
  { name: 'jwt-service', folders: ['jwt-service/', 'exchange/'] },
  // The caller's side: JwtService client, call credentials (on behalf of a caller too) and the tokens they hold.
  { name: 'client', folders: ['client/'] },
  // Inside a protected service: remote verifier, the documents it fetches, the auth interceptor and its decision.
  { name: 'protected-service', folders: ['protected-service/'] },
  // Token exchange's trust made of the consumers' remote verifiers.
  { name: 'exchange-issuers', folders: ['exchange/remote/'] },
  // createJwtServer: its options, the transports behind it, health, reflection.
  { name: 'server', folders: ['server/'] },
  // Several processes serving one port: primary, workers, key reload over IPC.
  { name: 'cluster', folders: ['cluster/'] },
  // The public API, one entry point per concern (issuer.ts is the package's main one; index.ts re-exports them all for the tests and benches): re-exports from the layers below; importing one starts nothing.
  { name: 'lib', folders: ['lib/'] },
  // The command line: argument parsing, serve, keys, token, verify.
  { name: 'cli', folders: ['cli/'] },
  // The executable: sets V8 flags and hands argv to the CLI.
  { name: 'bin', folders: ['bin/'] },
];

/** An import as written: the importing file (relative to src/), the specifier, the resolved file. */
interface Import {
  readonly from: string;
  readonly specifier: string;
  readonly to: string | undefined;
}

/** `import ... from '...'`, `export ... from '...'` (type-only included), `import '...'`, `import('...')`. */
const IMPORT_PATTERNS: readonly RegExp[] = [
  /^\s*(?:import|export)\s[^;'"]*?\sfrom\s*['"]([^'"]+)['"]/gm,
  /^\s*import\s*['"]([^'"]+)['"]/gm,
  /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
];

/** The .ts files under `dir`, relative to it (node_modules of a fixture excluded). */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.parentPath.includes('node_modules'))
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split('\\').join('/'))
    .sort();
}

/**
 * Imports of `file` (relative to `root`, default src/) written as relative specifiers,
 * resolved relative to `root`; packages and node: builtins are outside the layers.
 */
function importsOf(file: string, source: string, root: string = SRC): Import[] {
  // Block comments hold TSDoc @example code, which is not an import of the file.
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '');
  const found: Import[] = [];
  for (const pattern of IMPORT_PATTERNS) {
    for (const match of code.matchAll(pattern)) {
      const specifier = match[1]!;
      if (!specifier.startsWith('.')) continue;
      const target = relative(root, resolve(root, dirname(file), specifier.replace(/\.js$/, '.ts')))
        .split('\\')
        .join('/');
      found.push({ from: file, specifier, to: target });
    }
  }
  return found;
}

function layerOf(file: string): { readonly index: number; readonly name: string } | undefined {
  let best: { index: number; name: string; length: number } | undefined;
  LAYERS.forEach(({ name, folders }, index) => {
    for (const folder of folders)
      if (file.startsWith(folder) && (best === undefined || folder.length > best.length)) best = { index, name, length: folder.length };
  });
  return best === undefined ? undefined : { index: best.index, name: best.name };
}

/** Every circle of imports, each as the files in order with the first repeated at the end. */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return cycles;
}

const files = sourceFiles(SRC);
const imports = files.flatMap((file) => importsOf(file, readFileSync(join(SRC, file), 'utf8')));

describe('the layers of src/', () => {
  it('reads the imports of every file', () => {
    // The parser sees the imports the whole tree is known to hold; a miss would hide a layer break.
    expect(files.length).toBeGreaterThan(50);
    expect(imports.length).toBeGreaterThan(files.length);
    const fileSet = new Set(files);
    const unresolved = imports.filter((entry) => !fileSet.has(entry.to!)).map((entry) => `${entry.from}: '${entry.specifier}'`);
    expect(unresolved, 'imports that name no file in src/').toEqual([]);
  });

  it("lists folders only: no file is an exception to its folder's layer", () => {
    expect(LAYERS.flatMap(({ folders }) => folders).filter((folder) => !folder.endsWith('/'))).toEqual([]);
  });

  it('puts every file in a layer', () => {
    expect(
      files.filter((file) => layerOf(file) === undefined),
      'files in no layer of LAYERS',
    ).toEqual([]);
  });

  it('has no import from a lower layer to a higher one', () => {
    const upward = imports.flatMap(({ from, specifier, to }) => {
      const own = layerOf(from);
      const target = layerOf(to!);
      if (own === undefined || target === undefined || target.index <= own.index) return [];
      return [`src/${from} (layer ${own.name}) imports '${specifier}' (layer ${target.name})`];
    });
    expect(upward).toEqual([]);
  });

  it('has no circle of imports', () => {
    const graph = new Map<string, string[]>(files.map((file) => [file, []]));
    for (const { from, to } of imports) graph.get(from)!.push(to!);
    const cycles = cyclesOf(graph);
    expect(cycles.map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it('finds an upward import and a circle when there is one', () => {
    // The checks themselves, on a made-up source: an import written across lines, a type
    // import, a re-export and a dynamic import are all read; an @example is not.
    const source = [
      "import {\n  a,\n  b,\n} from '../cluster/run.js';",
      "import type { T } from './core.js';",
      "export { c } from '../base/errors.js';",
      "const m = await import('../cli/main.js');",
      "/** @example\n * import { x } from '../bin/jwt-grpc.js';\n */",
    ].join('\n');
    const found = importsOf('keys/reload.ts', source).map((entry) => entry.to);
    expect(found.sort()).toEqual(['base/errors.ts', 'cli/main.ts', 'cluster/run.ts', 'keys/core.ts']);
    expect(layerOf('cluster/run.ts')!.index).toBeGreaterThan(layerOf('keys/reload.ts')!.index);
    expect(layerOf('transport/http2/wire/frames.ts')!.name).toBe('wire');
    const circle = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
    ]);
    expect(cyclesOf(circle)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  });
});

/** The relative imports of the .ts files under bench/ and test/, as paths from the repository root. */
function supportImports(): Import[] {
  const files = [...sourceFiles(BENCH).map((file) => `bench/${file}`), ...sourceFiles(TEST).map((file) => `test/${file}`)];
  return files.flatMap((file) => importsOf(file, readFileSync(join(ROOT, file), 'utf8'), ROOT));
}

/**
 * Who may import what across bench/ and test/. The kit (bench/kit/) is the one home of test
 * support, the bottom both stand on: it imports src/ and itself, nothing else of the
 * repository. The benchmark runs without the test suite: nothing in bench/ imports test/.
 * test/ may import anything in bench/ (the kit, and the bench modules its own tests cover).
 */
const ONE_WAY: readonly { readonly files: string; readonly mayImport: (to: string) => boolean; readonly why: string }[] = [
  {
    files: 'bench/kit/',
    mayImport: (to) => to.startsWith('bench/kit/') || !/^(bench|test)\//.test(to),
    why: 'the kit imports only itself and src/',
  },
  { files: 'bench/', mayImport: (to) => !to.startsWith('test/'), why: 'bench/ never imports test/' },
];

/** Each import that breaks a rule of {@link ONE_WAY}, as `from imports 'specifier' (why)`. */
function wrongWay(imports: readonly Import[]): string[] {
  return imports.flatMap(({ from, specifier, to }) => {
    const broken = ONE_WAY.filter((rule) => from.startsWith(rule.files) && !rule.mayImport(to!));
    return broken.map((rule) => `${from} imports '${specifier}' (${rule.why})`);
  });
}

describe('bench/ and test/: the kit at the bottom, one way', () => {
  const found = supportImports();
  const files = new Set([...sourceFiles(BENCH).map((file) => `bench/${file}`), ...sourceFiles(TEST).map((file) => `test/${file}`)]);
  const graph = new Map<string, string[]>([...files].map((file) => [file, []]));
  for (const { from, to } of found) if (files.has(to!)) graph.get(from)!.push(to!);

  it('reads the imports of their files', () => {
    expect(files.size).toBeGreaterThan(300);
    expect([...graph.values()].flat().length).toBeGreaterThan(files.size);
    // The suite stands on the kit: most test files import it.
    expect(found.filter(({ from, to }) => from.startsWith('test/') && to!.startsWith('bench/kit/')).length).toBeGreaterThan(100);
  });

  it('has no import against the direction of ONE_WAY', () => {
    expect(wrongWay(found)).toEqual([]);
  });

  it('has no circle of imports', () => {
    expect(cyclesOf(graph).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it('finds an import the wrong way when there is one', () => {
    const made = (from: string, to: string): Import => ({ from, specifier: to, to });
    expect(
      wrongWay([
        made('bench/kit/launcher.ts', 'bench/harness/cores.ts'),
        made('bench/kit/wait.ts', 'test/house/layers.test.ts'),
        made('bench/macro/run.ts', 'test/client/harness.ts'),
        made('bench/kit/cli.ts', 'bench/kit/exec.ts'),
        made('bench/kit/jwt-servers.ts', 'src/lib/index.ts'),
        made('bench/macro/run.ts', 'bench/harness/cores.ts'),
        made('test/cli/cli.integration.test.ts', 'bench/macro/servers.ts'),
      ]),
    ).toEqual([
      "bench/kit/launcher.ts imports 'bench/harness/cores.ts' (the kit imports only itself and src/)",
      "bench/kit/wait.ts imports 'test/house/layers.test.ts' (the kit imports only itself and src/)",
      "bench/kit/wait.ts imports 'test/house/layers.test.ts' (bench/ never imports test/)",
      "bench/macro/run.ts imports 'test/client/harness.ts' (bench/ never imports test/)",
    ]);
  });
});
