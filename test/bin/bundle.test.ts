/**
 * The bundled executable (src/bin/bundle.mjs, run by `npm run build`): what it holds, read
 * from the source maps of the files it wrote. jwt-grpc's code and @opentelemetry/api are in
 * it; grpc-js, what parses .proto files, pino, prom-client and the optional peers are not (an
 * app shares one copy of each with the CLI, loaded on first use); every bundled package's
 * licence ships beside it; the entry turns the compile cache on before it loads any chunk.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoPath } from '../../bench/kit/paths.js';

const BIN = repoPath('dist', 'src', 'bin');
const CHUNKS = join(BIN, 'chunks');

/** Every file the bundle wrote that runs: the entry and its chunks. */
function bundleFiles(): string[] {
  return [join(BIN, 'jwt-grpc.js'), ...readdirSync(CHUNKS).flatMap((name) => (name.endsWith('.js') ? [join(CHUNKS, name)] : []))];
}

/** The npm packages whose files went into the bundle, from the source maps. */
function bundledPackages(): Set<string> {
  const packages = new Set<string>();
  for (const file of bundleFiles()) {
    const { sources } = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
    for (const source of sources) {
      const name = source.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//)?.[1];
      if (name !== undefined) packages.add(name);
    }
  }
  return packages;
}

describe('the bundled executable', () => {
  it('holds @opentelemetry/api and no package an app shares with it or installs only for a feature', () => {
    const packages = bundledPackages();
    expect([...packages]).toEqual(['@opentelemetry/api']);
  });

  it("ships each bundled package's licence text, named with its version and licence", () => {
    const text = readFileSync(join(BIN, 'third-party-licenses.txt'), 'utf8');
    for (const name of bundledPackages()) {
      const manifest = JSON.parse(readFileSync(repoPath('node_modules', name, 'package.json'), 'utf8')) as {
        version: string;
        license: string;
      };
      expect(text).toContain(`${name}@${manifest.version} (${manifest.license})`);
      expect(text).toContain(
        readFileSync(repoPath('node_modules', name, 'LICENSE'), 'utf8')
          .trim()
          .slice(0, 200),
      );
    }
  });

  it("loads grpc-js from node_modules where it needs it, and Node's builtins without ES facades", () => {
    const code = bundleFiles().map((file) => readFileSync(file, 'utf8'));
    expect(code.some((text) => text.includes('from "@grpc/grpc-js"'))).toBe(true);
    // A static `import ... from "node:x"` would build a facade reading every export; the
    // bundle's one ES import of a builtin is node:module's createRequire, in each file's banner.
    for (const text of code) expect(text.match(/from ["']node:(?!module["'])[\w/]+["']/g) ?? []).toEqual([]);
  });

  it('the entry turns the compile cache on, then loads the command chunks', () => {
    const entry = readFileSync(join(BIN, 'jwt-grpc.js'), 'utf8');
    expect(entry.startsWith('#!/usr/bin/env node\n')).toBe(true);
    const cacheAt = entry.indexOf('enableCompileCache');
    const mainAt = entry.search(/import\("\.\/chunks\/main-[\w-]+\.js"\)/);
    expect(cacheAt).toBeGreaterThan(0);
    expect(mainAt).toBeGreaterThan(cacheAt);
  });
});
