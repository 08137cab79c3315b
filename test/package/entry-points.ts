/**
 * The package's entry points as package.json's `exports` declares them: the specifier a
 * program imports, the source file, and the built module and declarations. Tests that walk
 * the public API walk these, so a new entry point is walked as soon as it is declared.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';

export interface EntryPoint {
  /** What a program imports: `jwt-grpc`, `jwt-grpc/client`. */
  readonly specifier: string;
  /** The source, relative to the package root: `src/lib/client.ts`. */
  readonly source: string;
  /** The built module and its declarations, relative to the package root. */
  readonly module: string;
  readonly types: string;
}

interface Conditions {
  readonly types: string;
  readonly default: string;
}

const MANIFEST = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, string | Conditions>;
};

/** Every module entry point (the .proto and package.json exports are files, not modules), `jwt-grpc` first. */
export const ENTRY_POINTS: readonly EntryPoint[] = Object.entries(MANIFEST.exports).flatMap(([subpath, target]) => {
  if (typeof target === 'string') return [];
  const module = target.default.replace(/^\.\//, '');
  return [
    {
      specifier: subpath === '.' ? MANIFEST.name : `${MANIFEST.name}/${subpath.replace(/^\.\//, '')}`,
      source: module.replace(/^dist\//, '').replace(/\.js$/, '.ts'),
      module,
      types: target.types.replace(/^\.\//, ''),
    },
  ];
});

/** The entry point whose specifier is `specifier`; throws on a name package.json does not declare. */
export function entryPoint(specifier: string): EntryPoint {
  const found = ENTRY_POINTS.find((entry) => entry.specifier === specifier);
  if (found === undefined) throw new Error(`package.json declares no entry point ${specifier}`);
  return found;
}
