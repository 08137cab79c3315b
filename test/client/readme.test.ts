/**
 * docs/protecting-services.md is a tested example: its ```proto block becomes greeter.proto,
 * its ```ts blocks one program, as a reader follows them (each block's hidden set-up lines
 * dropped: test/package/examples.ts), that imports 'jwt-grpc' as a user would (the built
 * package, `npm run build` first), type-checked with tsc and run with node, with TLS files
 * made at test time. Each block on its own is type-checked by test/package/pack.integration.test.ts.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runToExit } from '../../bench/kit/launcher.js';
import { type TestCerts, hasOpenssl, makeTestCerts } from '../../bench/kit/certs.js';
import { visibleOf } from '../package/examples.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGE = 'docs/protecting-services.md';

/** The fenced blocks of `language` in the page, hidden lines dropped. */
function blocks(language: string): string[] {
  const page = readFileSync(join(ROOT, PAGE), 'utf8');
  return [...page.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((match) => visibleOf(match[1] as string));
}

let certs: TestCerts;
let dir: string;

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist/src/lib/index.js'))) throw new Error('the example imports the built package: run `npm run build` first');
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

describe('docs/protecting-services.md', () => {
  it('has one proto and four TypeScript blocks', () => {
    expect(blocks('proto')).toHaveLength(1);
    expect(blocks('ts')).toHaveLength(4);
  });

  it('type-checks and runs: the caller meets the scope rule, on the protected service and on the one beside the issuer', {
    timeout: 90_000,
  }, async () => {
    writeFileSync(join(dir, 'greeter.proto'), blocks('proto')[0] as string);
    writeFileSync(join(dir, 'example.ts'), blocks('ts').join('\n'));
    copyFileSync(certs.files.caCert, join(dir, 'ca.pem'));
    copyFileSync(certs.files.serverCert, join(dir, 'server.pem'));
    copyFileSync(certs.files.serverKey, join(dir, 'server-key.pem'));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: '../../tsconfig.json',
        compilerOptions: { noEmit: true, rootDir: '.' },
        include: ['example.ts'],
        exclude: [],
      }),
    );

    const typecheck = await runToExit(join(ROOT, 'node_modules/.bin/tsc'), ['-p', join(dir, 'tsconfig.json')], {
      cwd: dir,
      timeoutMs: 120_000,
    });
    if (typecheck.code !== 0) throw new Error(`the example does not type-check:\n${typecheck.stdout}${typecheck.stderr}`);
    const example = await runToExit(
      process.execPath,
      ['--experimental-strip-types', '--disable-warning=ExperimentalWarning', 'example.ts'],
      {
        cwd: dir,
        timeoutMs: 60_000,
      },
    );
    expect([example.code, example.stdout, example.stderr]).toEqual([0, 'hello svc-orders\nhello again svc-orders\n', '']);
  });
});
