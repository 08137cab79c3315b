/**
 * README's "Protecting your services" is a tested example: its ```proto block becomes
 * greeter.proto, its ```ts blocks one program that imports 'jwt-grpc' as a user would (the
 * built package, `npm run build` first), type-checked with tsc and run with node, with TLS
 * files made at test time.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runToExit } from '../../bench/kit/launcher.js';
import { type TestCerts, hasOpenssl, makeTestCerts } from '../helpers/certs.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SECTION = '## Protecting your services';

/** The fenced blocks of `language` in README's section. */
function blocks(language: string): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n${SECTION}\n`);
  if (start < 0) throw new Error(`README.md has no "${SECTION}" section`);
  const end = readme.indexOf('\n## ', start + SECTION.length + 2);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((match) => match[1] as string);
}

let certs: TestCerts;
let dir: string;

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist/src/lib.js'))) throw new Error('the README example imports the built package: run `npm run build` first');
  if (!hasOpenssl()) throw new Error('this test needs the openssl command on PATH');
  certs = makeTestCerts();
  // Inside the package, so that `import ... from 'jwt-grpc'` resolves to it (a package may import itself by name).
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  dir = mkdtempSync(join(ROOT, 'dist', 'readme-example-'));
});

afterAll(() => {
  certs?.remove();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('README: Protecting your services', () => {
  it('has one proto and three TypeScript blocks', () => {
    expect(blocks('proto')).toHaveLength(1);
    expect(blocks('ts')).toHaveLength(3);
  });

  it('type-checks and runs: the caller gets through the protected service', { timeout: 90_000 }, async () => {
    writeFileSync(join(dir, 'greeter.proto'), blocks('proto')[0] as string);
    writeFileSync(join(dir, 'example.ts'), blocks('ts').join('\n'));
    copyFileSync(certs.files.caCert, join(dir, 'ca.pem'));
    copyFileSync(certs.files.serverCert, join(dir, 'server.pem'));
    copyFileSync(certs.files.serverKey, join(dir, 'server-key.pem'));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ extends: '../../tsconfig.json', compilerOptions: { noEmit: true, rootDir: '.' }, include: ['example.ts'], exclude: [] }),
    );

    const typecheck = await runToExit(join(ROOT, 'node_modules/.bin/tsc'), ['-p', join(dir, 'tsconfig.json')], { cwd: dir, timeoutMs: 120_000 });
    if (typecheck.code !== 0) throw new Error(`the README example does not type-check:\n${typecheck.stdout}${typecheck.stderr}`);
    const example = await runToExit(process.execPath, ['--experimental-strip-types', '--disable-warning=ExperimentalWarning', 'example.ts'], {
      cwd: dir,
      timeoutMs: 60_000,
    });
    expect([example.code, example.stdout, example.stderr]).toEqual([0, 'hello svc-orders\n', '']);
  });
});
