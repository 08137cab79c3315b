/**
 * The docs protect one Greeter: the one whose greeter.proto docs/protecting-services.md
 * shows (and test/client/readme.test.ts runs). A rule written elsewhere for a method that
 * proto lacks would be a rule that matches nothing, copied by a reader into a service
 * where it protects nothing. So every method path of the Greeter written as a string
 * (`'/demo.Greeter/Hello'`) in README.md, docs/*.md or the TSDoc of src/ names one of
 * that proto's methods.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';
import { markdownPages } from '../package/examples.js';

/** The rpc names of the greeter.proto block of docs/protecting-services.md. */
function protoMethods(): Set<string> {
  const page = readFileSync(join(PACKAGE_ROOT, 'docs', 'protecting-services.md'), 'utf8');
  const proto = /```proto\n([\s\S]*?)```/.exec(page)?.[1] ?? '';
  expect(proto, 'the proto block of docs/protecting-services.md').toContain('service Greeter');
  return new Set([...proto.matchAll(/^\s*rpc (\w+)/gm)].map((match) => match[1] as string));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(PACKAGE_ROOT, join(entry.parentPath, entry.name)));
}

/** Every `'/demo.Greeter/METHOD'` string of a file, with where it is. */
function greeterPaths(file: string): { where: string; method: string }[] {
  const lines = readFileSync(join(PACKAGE_ROOT, file), 'utf8').split('\n');
  return lines.flatMap((line, index) =>
    [...line.matchAll(/'\/demo\.Greeter\/(\w+)'/g)].map((match) => ({ where: `${file}:${index + 1}`, method: match[1] as string })),
  );
}

describe('the Greeter of the docs', () => {
  it('has the same methods everywhere: each rule path names a method of its greeter.proto', () => {
    const methods = protoMethods();
    const found = [...markdownPages(), ...sourceFiles(join(PACKAGE_ROOT, 'src'))].flatMap(greeterPaths);
    expect(found.length, 'Greeter paths in the docs').toBeGreaterThanOrEqual(4);
    expect(found.filter(({ method }) => !methods.has(method))).toEqual([]);
  });
});
